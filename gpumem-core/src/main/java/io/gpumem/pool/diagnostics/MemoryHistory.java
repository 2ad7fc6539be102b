package io.gpumem.pool.diagnostics;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

import io.gpumem.allocator.AllocatorDecorator;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryHolder;
import io.gpumem.stream.GpuStream;

/**
 * A pool's {@link PoolRecorder}: a bounded history of its last events ({@link MemoryEvent}) in constant memory, and
 * the one place its events are told, to the history and to the flight recorder ({@link PoolEvents}). Recorded
 * buffers' acquires and closes come from {@link AcquireSites}; nothing else on the hit path records. Each event goes
 * into the {@link EventRing} of the recording thread's stripe, claimed from a hint of its own, so that a recorded hit
 * writes nothing another stripe's threads write and allocates no event; a read merges the rings by time (as Linux's
 * perf merges its per-CPU buffers), from the newest event every ring still holds.
 */
final class MemoryHistory implements PoolRecorder {

	private static final long START_MICROS = TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());

	private static final long START_NANOS = System.nanoTime();

	/**
	 * How far apart two rings' hints lie in {@link #hints}, and from its ends: 128 bytes, so that no hint shares a
	 * cache line, or a pair of lines the processor fetches together, with another or with what lies beside the array.
	 */
	private static final int STRIDE = 16;

	private final String pool;

	private final BufferRecording recording;

	/** The rings, one per stripe, each made at its first event. */
	private final AtomicReferenceArray<EventRing> rings;

	/**
	 * Per ring, at {@code STRIDE} times its index plus one, where its next event likely goes: the sequence after one
	 * claimed lately, written without an atomic update ({@link EventRing#claim} finds the slot free from there).
	 */
	private final AtomicLongArray hints;

	/** How many events the history holds, and each ring. */
	private final int events;

	/** The ring of the calling thread: its stripe, before masking. */
	private final IntSupplier stripe;

	/** Bytes the pool holds from its allocator, as the pool counts them. */
	private final LongSupplier reservedBytes;

	private final AcquireSites sites;

	/**
	 * The history of pool {@code pool} over a device of {@code deviceBytes}, its events in {@code stripes} rings (a power
	 * of two), each thread's in that of {@code stripe}.
	 */
	MemoryHistory(String pool, HistoryConfig config, LongSupplier reservedBytes, long deviceBytes, int stripes,
			IntSupplier stripe) {
		this.pool = pool;
		this.recording = config.buffers();
		this.events = config.events();
		this.rings = new AtomicReferenceArray<>(Integer.highestOneBit(Math.max(1, stripes)));
		this.hints = new AtomicLongArray((this.rings.length() + 2) * STRIDE);
		this.stripe = stripe;
		this.reservedBytes = reservedBytes;
		this.sites = new AcquireSites(this, this.recording.framesEveryBytes(deviceBytes));
	}

	@Override
	public MemoryAllocator recording(MemoryAllocator allocator) {
		return new AllocatorDecorator(allocator) {

			@Override
			public Allocation allocate(long bytes) {
				Allocation allocation = super.allocate(bytes);
				record(MemoryEvent.Type.SEGMENT_ALLOCATED, bytes);
				PoolEvents.segment(pool, bytes, true);
				return allocation;
			}

			@Override
			public void free(Allocation allocation) {
				long bytes = allocation.size();
				super.free(allocation);
				record(MemoryEvent.Type.SEGMENT_RELEASED, bytes);
				PoolEvents.segment(pool, bytes, false);
			}

		};
	}

	/** The ring of the calling thread. */
	private int ring() {
		return ring(this.stripe.getAsInt());
	}

	/** The ring of stripe {@code stripe}, before masking. */
	private int ring(int stripe) {
		return stripe & (this.rings.length() - 1);
	}

	/** The place of the next event in ring {@code ring}, claimed for an entry {@link #put} there; -1 where none is kept. */
	long claim(int ring) {
		if (this.events == 0) {
			return -1;
		}
		int hint = (ring + 1) * STRIDE;
		long sequence = ringOf(ring).claim(this.hints.getPlain(hint));
		if (sequence >= 0) {
			this.hints.setRelease(hint, sequence + 1);
		}
		return sequence;
	}

	/**
	 * The number of a recorded buffer, which its acquire and close carry: where its acquire lies in the rings, or 0
	 * where no event is kept.
	 */
	long bufferNumber(int ring, long sequence) {
		return (sequence < 0) ? 0 : sequence * this.rings.length() + ring + 1;
	}

	@Override
	public long acquiring(long bytes) {
		return this.recording.records(bytes) ? System.nanoTime() : NOT_RECORDED;
	}

	@Override
	public Lend lent(Object block, long requestedBytes, long blockBytes, long acquiringNanos, int stripe) {
		return this.sites.lent(block, requestedBytes, blockBytes, acquiringNanos, ring(stripe));
	}

	@Override
	public void returned(Lend lend) {
		((AcquireSites.Lend) lend).returned();
	}

	@Override
	public void closed(Lend lend, GpuStream after) {
		AcquireSites.Lend closed = (AcquireSites.Lend) lend;
		int ring = closed.ring;
		put(ring, claim(ring), MemoryEvent.Type.CLOSE, System.nanoTime(), closed.requestedBytes, closed.blockBytes,
				closed.buffer, after, closed.sampled());
	}

	@Override
	public List<MemoryHolder> holders(int count) {
		return this.sites.top(count);
	}

	@Override
	public Map<Object, Lend> lends() {
		return this.sites.lends();
	}

	@Override
	public Object missBegins() {
		return PoolEvents.missBegins();
	}

	@Override
	public void missEnded(Object miss, String kind, long bytes, boolean failed) {
		PoolEvents.missEnds((PoolEvents.Miss) miss, this.pool, kind, bytes, failed);
	}

	/**
	 * Tells of a trim down to {@code keepBytes} that released {@code releasedBytes}, if it released anything: the
	 * out-of-memory path and the idle trim try often, mostly in vain.
	 */
	@Override
	public void trimmed(long keepBytes, long releasedBytes, boolean idle) {
		if (releasedBytes > 0) {
			record(MemoryEvent.Type.TRIM, releasedBytes);
			PoolEvents.trimmed(this.pool, keepBytes, releasedBytes, idle);
		}
	}

	/** Tells of an acquire of {@code bytes} that failed for want of memory, as {@code message} says. */
	@Override
	public void outOfMemory(long bytes, String message) {
		record(MemoryEvent.Type.OUT_OF_MEMORY, bytes);
		PoolEvents.outOfMemory(this.pool, bytes, message);
	}

	/**
	 * The events held, oldest first, and whether they are all since the pool started (no ring lapped, none left
	 * out). Each is numbered by its place among all the pool recorded, as far as the counts read tell.
	 */
	@Override
	public PoolHistory read() {
		long recorded = 0;
		long from = Long.MIN_VALUE;
		List<EventRing.Held> held = new ArrayList<>();
		for (int ring = 0; ring < this.rings.length(); ring++) {
			EventRing events = this.rings.get(ring);
			if (events != null) {
				EventRing.Lap lap = events.read(ring, held);
				recorded += lap.count();
				from = Math.max(from, lap.from());
			}
		}
		long start = from;
		held.removeIf((event) -> event.nanos() < start);
		held.sort(Comparator.comparingLong(EventRing.Held::nanos).thenComparingInt(EventRing.Held::ring)
			.thenComparingLong(EventRing.Held::sequence));
		List<EventRing.Held> kept = held.subList(Math.max(0, held.size() - this.events), held.size());
		long first = recorded - kept.size();
		List<MemoryEvent> events = new ArrayList<>(kept.size());
		for (int i = 0; i < kept.size(); i++) {
			EventRing.Held event = kept.get(i);
			events.add(event.event(first + i, START_MICROS + (event.nanos() - START_NANOS) / 1000));
		}
		return new PoolHistory(this.pool, first == 0, events);
	}

	private void record(MemoryEvent.Type type, long bytes) {
		int ring = ring();
		put(ring, claim(ring), type, System.nanoTime(), bytes, 0, 0, null, null);
	}

	/**
	 * Puts an event at {@code sequence} ({@link #claim}) in ring {@code ring}, with the bytes the pool holds now; the
	 * acquiring frames of {@code lend}, where kept, go with it.
	 */
	void put(int ring, long sequence, MemoryEvent.Type type, long nanos, long bytes, long blockBytes, long buffer,
			GpuStream stream, AcquireSites.Lend lend) {
		if (sequence >= 0) {
			ringOf(ring).put(sequence, type, nanos, bytes, blockBytes, buffer, this.reservedBytes.getAsLong(), stream,
					lend);
		}
	}

	/**
	 * The ring of index {@code ring}, made at its first event with room for every event the history holds, rounded
	 * up to a power of two.
	 */
	private EventRing ringOf(int ring) {
		EventRing events = this.rings.get(ring);
		if (events == null) {
			int capacity = Math.max(1, Integer.highestOneBit(this.events - 1) << 1);
			this.rings.compareAndSet(ring, null, new EventRing(capacity));
			events = this.rings.get(ring);
		}
		return events;
	}

}
