package io.gpumem.pool.diagnostics;

import java.util.List;
import java.util.Map;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryHolder;
import io.gpumem.stream.GpuStream;

/**
 * What a pool tells its diagnostics, and asks of them: the one seam between lending and recording. A pool calls it
 * where a buffer is lent and returned, where it trims or fails, and for the blocks it allocates; behind it lie the
 * pool's bounded history, the sites its buffers were acquired at, and its flight-recorder events.
 */
public interface PoolRecorder {

	/** What {@link #acquiring} answers where buffers of the size are not recorded. */
	long NOT_RECORDED = Long.MIN_VALUE;

	/**
	 * The recorder of pool {@code pool} over a device of {@code deviceBytes}, as {@code config} says, that reads the
	 * bytes the pool holds of its allocator from {@code reservedBytes}, and records the events of each of
	 * {@code stripes} stripes apart, the calling thread's stripe read from {@code stripe}.
	 */
	static PoolRecorder of(String pool, HistoryConfig config, LongSupplier reservedBytes, long deviceBytes,
			int stripes, IntSupplier stripe) {
		return new MemoryHistory(pool, config, reservedBytes, deviceBytes, stripes, stripe);
	}

	/**
	 * When an acquire of {@code bytes} about to take its block began, taken before it does so that a replay takes
	 * memory no later than the pool did; {@link #NOT_RECORDED} where buffers of that size are not recorded. On the
	 * hit path.
	 */
	long acquiring(long bytes);

	/**
	 * Records the lend of {@code block}, of {@code blockBytes}, to a buffer of {@code requestedBytes} whose acquire
	 * began at {@code acquiringNanos}, as {@link #acquiring} answered (not {@link #NOT_RECORDED}), on stripe
	 * {@code stripe}, whose events its close joins too. On the hit path.
	 * @return the lend, for the buffer to hand back as it is returned and closed
	 */
	Lend lent(Object block, long requestedBytes, long blockBytes, long acquiringNanos, int stripe);

	/** Records that the buffer of {@code lend} was returned: it holds its block no more. */
	void returned(Lend lend);

	/**
	 * Records the close of the buffer of {@code lend}, once its block is back in the pool, or once the work on
	 * {@code after} has run where it was closed after it.
	 */
	void closed(Lend lend, GpuStream after);

	/** {@code allocator}, recording each allocation and free of the pool's. */
	MemoryAllocator recording(MemoryAllocator allocator);

	/** Records a trim down to {@code keepBytes} that released {@code releasedBytes}, if it released anything. */
	void trimmed(long keepBytes, long releasedBytes, boolean idle);

	/** Records that a miss of {@code bytes} begins: the flight recorder's event, ended by {@link #missEnded}. */
	Object missBegins();

	/** Records the end of the miss {@code miss} of {@code bytes} of memory of {@code kind}, failed or served. */
	void missEnded(Object miss, String kind, long bytes, boolean failed);

	/** Records an acquire of {@code bytes} that failed for want of memory, as {@code message} says. */
	void outOfMemory(long bytes, String message);

	/** The {@code count} largest holders of lent memory by acquiring site, largest first, where recorded. */
	List<MemoryHolder> holders(int count);

	/** The lends whose acquiring sites are kept, by their block. */
	Map<Object, Lend> lends();

	/** The events held. */
	PoolHistory read();


	/** A recorded buffer's lend: when, on what stream and where it was acquired. */
	interface Lend {

		/** When its acquire began, on {@link System#nanoTime()}'s clock. */
		long acquiredNanos();

		/** The stream the acquire was ordered on, or null. */
		GpuStream stream();

		/** The acquiring frames, where kept; empty otherwise. */
		List<String> frames();

	}

}
