package io.gpumem.pool.diagnostics;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.LongSupplier;

import io.gpumem.allocator.AllocatorDecorator;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryHolder;
import io.gpumem.stream.GpuStream;

/**
 * A pool's {@link PoolRecorder}: a bounded history, a ring of its last events ({@link MemoryEvent}) in constant
 * memory, and the one place its events are told, to the ring and to the flight recorder ({@link PoolEvents}).
 * Recorded buffers' acquires and closes come from {@link AcquireSites}; nothing else on the hit path records.
 */
final class MemoryHistory implements PoolRecorder {

	private static final long START_MICROS = TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());

	private static final long START_NANOS = System.nanoTime();

	private final String pool;

	private final BufferRecording recording;

	private final AtomicReferenceArray<Entry> ring;

	private final AtomicLong next = new AtomicLong();

	private final AtomicLong buffers = new AtomicLong();

	/** Bytes the pool holds from its allocator, as the pool counts them. */
	private final LongSupplier reservedBytes;

	private final AcquireSites sites;

	MemoryHistory(String pool, HistoryConfig config, LongSupplier reservedBytes) {
		this.pool = pool;
		this.recording = config.buffers();
		this.ring = new AtomicReferenceArray<>(config.events());
		this.reservedBytes = reservedBytes;
		this.sites = new AcquireSites(this);
	}

	@Override
	public MemoryAllocator recording(MemoryAllocator allocator) {
		return new AllocatorDecorator(allocator) {

			@Override
			public Allocation allocate(long bytes) {
				Allocation allocation = super.allocate(bytes);
				record(MemoryEvent.Type.SEGMENT_ALLOCATED, bytes, 0, 0, reservedBytes.getAsLong(), null, null);
				PoolEvents.segment(pool, bytes, true);
				return allocation;
			}

			@Override
			public void free(Allocation allocation) {
				long bytes = allocation.size();
				super.free(allocation);
				record(MemoryEvent.Type.SEGMENT_RELEASED, bytes, 0, 0, reservedBytes.getAsLong(), null, null);
				PoolEvents.segment(pool, bytes, false);
			}

		};
	}

	/** Which buffers are recorded, and whose frames are kept. */
	BufferRecording bufferRecording() {
		return this.recording;
	}

	/** A number for a recorded buffer, which its acquire and close carry. */
	long nextBuffer() {
		return this.buffers.incrementAndGet();
	}

	/**
	 * The sequence of an acquire of {@code bytes} about to take its block, drawn before it does so that a replay
	 * takes memory no later than the pool did; -1 where buffers of that size are not recorded.
	 */
	@Override
	public long acquiring(long bytes) {
		return this.recording.records(bytes) ? nextSequence() : -1;
	}

	@Override
	public Lend lent(Object block, long requestedBytes, long blockBytes, long number) {
		return this.sites.lent(block, requestedBytes, blockBytes, number);
	}

	@Override
	public void returned(Lend lend) {
		((AcquireSites.Lend) lend).returned();
	}

	@Override
	public void closed(Lend lend, GpuStream after) {
		AcquireSites.Lend closed = (AcquireSites.Lend) lend;
		record(MemoryEvent.Type.CLOSE, closed.requestedBytes, closed.bytes, closed.buffer,
				this.reservedBytes.getAsLong(), after, null);
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

	private long nextSequence() {
		return this.next.getAndIncrement();
	}

	void acquired(long sequence, AcquireSites.Lend lend) {
		record(sequence, MemoryEvent.Type.ACQUIRE, lend.requestedBytes, lend.bytes, lend.buffer,
				this.reservedBytes.getAsLong(), lend.stream, lend);
	}

	/**
	 * Tells of a trim down to {@code keepBytes} that released {@code releasedBytes}, if it released anything: the
	 * out-of-memory path and the idle trim try often, mostly in vain.
	 */
	@Override
	public void trimmed(long keepBytes, long releasedBytes, boolean idle) {
		if (releasedBytes > 0) {
			record(MemoryEvent.Type.TRIM, releasedBytes, 0, 0, this.reservedBytes.getAsLong(), null, null);
			PoolEvents.trimmed(this.pool, keepBytes, releasedBytes, idle);
		}
	}

	/** Tells of an acquire of {@code bytes} that failed for want of memory, as {@code message} says. */
	@Override
	public void outOfMemory(long bytes, String message) {
		record(MemoryEvent.Type.OUT_OF_MEMORY, bytes, 0, 0, this.reservedBytes.getAsLong(), null, null);
		PoolEvents.outOfMemory(this.pool, bytes, message);
	}

	/** The events held, and whether they are all since the pool started (no lap of the ring overwrote any). */
	@Override
	public PoolHistory read() {
		List<MemoryEvent> events = events();
		return new PoolHistory(this.pool, this.next.get() <= this.ring.length(), events);
	}

	/**
	 * The events held, oldest first: those of the last lap of the ring. An entry written late (an acquire that
	 * waited) never replaces a newer one, and a slot whose sequence was drawn and never written (an acquire that
	 * failed) holds no event of an earlier lap.
	 */
	private List<MemoryEvent> events() {
		long oldest = this.next.get() - this.ring.length();
		List<Entry> entries = new ArrayList<>(this.ring.length());
		for (int i = 0; i < this.ring.length(); i++) {
			Entry entry = this.ring.get(i);
			if (entry != null && entry.sequence >= oldest) {
				entries.add(entry);
			}
		}
		entries.sort(Comparator.comparingLong(Entry::sequence));
		return entries.stream().map(Entry::event).toList();
	}

	private void record(MemoryEvent.Type type, long bytes, long blockBytes, long buffer, long reserved,
			GpuStream stream, AcquireSites.Lend lend) {
		record(nextSequence(), type, bytes, blockBytes, buffer, reserved, stream, lend);
	}

	private void record(long sequence, MemoryEvent.Type type, long bytes, long blockBytes, long buffer,
			long reserved, GpuStream stream, AcquireSites.Lend lend) {
		if (this.ring.length() == 0) {
			return;
		}
		long nanos = (lend != null) ? lend.acquiredNanos() : System.nanoTime();
		long micros = START_MICROS + (nanos - START_NANOS) / 1000;
		Entry entry = new Entry(sequence, micros, type, bytes, blockBytes, buffer, reserved,
				Thread.currentThread().getName(), stream, lend);
		int slot = (int) (sequence % this.ring.length());
		for (Entry held = this.ring.get(slot); held == null || held.sequence < sequence; held = this.ring.get(slot)) {
			if (this.ring.compareAndSet(slot, held, entry)) {
				return;
			}
		}
	}

	/** An event as the ring holds it: its stream and acquiring frames are read only when the history is. */
	private record Entry(long sequence, long timeMicros, MemoryEvent.Type type, long bytes, long blockBytes,
			long buffer, long reservedBytes, String thread, GpuStream stream, AcquireSites.Lend lend) {

		MemoryEvent event() {
			return new MemoryEvent(this.sequence, this.timeMicros, this.type, this.bytes, this.blockBytes,
					this.buffer, this.reservedBytes, this.thread, (this.stream != null) ? this.stream.toString() : null,
					(this.lend != null) ? this.lend.frames() : List.of());
		}

	}

}
