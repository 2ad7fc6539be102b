package io.gpumem.pool.diagnostics;

import java.util.List;
import java.util.Map;
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

	/**
	 * The recorder of pool {@code pool}, as {@code config} says, that reads the bytes the pool holds of its allocator
	 * from {@code reservedBytes}.
	 */
	static PoolRecorder of(String pool, HistoryConfig config, LongSupplier reservedBytes) {
		return new MemoryHistory(pool, config, reservedBytes);
	}

	/**
	 * The number of an acquire of {@code bytes} about to take its block, drawn before it does so that a replay takes
	 * memory no later than the pool did; -1 where buffers of that size are not recorded. On the hit path.
	 */
	long acquiring(long bytes);

	/**
	 * Records the lend of {@code block}, of {@code blockBytes}, to a buffer of {@code requestedBytes}, under the
	 * number {@link #acquiring} drew (not -1). On the hit path.
	 * @return the lend, for the buffer to hand back as it is returned and closed
	 */
	Lend lent(Object block, long requestedBytes, long blockBytes, long number);

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

		/** When it was acquired, on {@link System#nanoTime()}'s clock. */
		long acquiredNanos();

		/** The stream the acquire was ordered on, or null. */
		GpuStream stream();

		/** The acquiring frames, where kept; empty otherwise. */
		List<String> frames();

	}

}
