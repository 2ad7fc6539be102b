package io.gpumem.pool.diagnostics;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;

import io.gpumem.stream.GpuStream;

/**
 * One stripe's ring of a {@link MemoryHistory}: its last events, each a slot across arrays of primitives, so that
 * recording one allocates nothing and stores no reference to a new object into an old one (a reference is written
 * only where it differs from the slot's: a thread's name, a stream, a sampled lend). A slot's stamp tells which event
 * it holds and is claimed while the event is written, so that a reader skips a slot being written, as a sequence lock
 * is read, and a writer late by a whole lap (an acquire that waited) never replaces a newer event.
 */
final class EventRing {

	private static final VarHandle STAMPS = MethodHandles.arrayElementVarHandle(long[].class);

	private static final MemoryEvent.Type[] TYPES = MemoryEvent.Type.values();

	/** Per slot, the sequence of the event held plus one: 0 empty, negative while an event is written there. */
	private final long[] stamps;

	private final byte[] types;

	private final long[] nanos;

	private final long[] bytes;

	private final long[] blockBytes;

	private final long[] buffers;

	private final long[] reserved;

	private final String[] threads;

	private final GpuStream[] streams;

	private final AcquireSites.Lend[] lends;

	private final int mask;

	/** A ring of {@code capacity} slots, a power of two. */
	EventRing(int capacity) {
		this.stamps = new long[capacity];
		this.types = new byte[capacity];
		this.nanos = new long[capacity];
		this.bytes = new long[capacity];
		this.blockBytes = new long[capacity];
		this.buffers = new long[capacity];
		this.reserved = new long[capacity];
		this.threads = new String[capacity];
		this.streams = new GpuStream[capacity];
		this.lends = new AcquireSites.Lend[capacity];
		this.mask = capacity - 1;
	}

	int capacity() {
		return this.stamps.length;
	}

	/**
	 * Writes the event of {@code sequence}, drawn from the ring's count, unless a newer one holds its slot; waits while
	 * an older one is being written there, a lap late.
	 */
	void put(long sequence, MemoryEvent.Type type, long nanos, long bytes, long blockBytes, long buffer, long reserved,
			GpuStream stream, AcquireSites.Lend lend) {
		int slot = (int) sequence & this.mask;
		long stamp = sequence + 1;
		for (;;) {
			long held = (long) STAMPS.getVolatile(this.stamps, slot);
			if (Math.abs(held) >= stamp) {
				return;
			}
			if (held < 0) {
				Thread.onSpinWait();
			}
			else if (STAMPS.compareAndSet(this.stamps, slot, held, -stamp)) {
				break;
			}
		}
		this.types[slot] = (byte) type.ordinal();
		this.nanos[slot] = nanos;
		this.bytes[slot] = bytes;
		this.blockBytes[slot] = blockBytes;
		this.buffers[slot] = buffer;
		this.reserved[slot] = reserved;
		String thread = Thread.currentThread().getName();
		if (this.threads[slot] != thread) {
			this.threads[slot] = thread;
		}
		if (this.streams[slot] != stream) {
			this.streams[slot] = stream;
		}
		if (this.lends[slot] != lend) {
			this.lends[slot] = lend;
		}
		STAMPS.setRelease(this.stamps, slot, stamp);
	}

	/**
	 * Adds to {@code into} the events of the last lap of a ring given {@code count} events, each as it was when read
	 * whole, and answers the time from which the ring holds every event it was given: its oldest's where it lapped.
	 */
	long read(int ring, long count, List<Held> into) {
		long oldest = count - capacity();
		long from = (oldest > 0) ? Long.MAX_VALUE : Long.MIN_VALUE;
		for (int slot = 0; slot < capacity(); slot++) {
			long stamp = (long) STAMPS.getAcquire(this.stamps, slot);
			if (stamp <= 0 || stamp - 1 < oldest) {
				continue;
			}
			Held held = new Held(ring, stamp - 1, this.nanos[slot], TYPES[this.types[slot]], this.bytes[slot],
					this.blockBytes[slot], this.buffers[slot], this.reserved[slot], this.threads[slot],
					this.streams[slot], this.lends[slot]);
			VarHandle.loadLoadFence();
			if ((long) STAMPS.getAcquire(this.stamps, slot) == stamp) {
				into.add(held);
				from = (oldest > 0) ? Math.min(from, held.nanos()) : from;
			}
		}
		return from;
	}

	/** An event read from a ring, at its place there; its stream and acquiring frames are read only now. */
	record Held(int ring, long sequence, long nanos, MemoryEvent.Type type, long bytes, long blockBytes, long buffer,
			long reservedBytes, String thread, GpuStream stream, AcquireSites.Lend lend) {

		MemoryEvent event(long number, long micros) {
			return new MemoryEvent(number, micros, this.type, this.bytes, this.blockBytes, this.buffer,
					this.reservedBytes, this.thread, (this.stream != null) ? this.stream.toString() : null,
					(this.lend != null) ? this.lend.frames() : List.of());
		}

	}

}
