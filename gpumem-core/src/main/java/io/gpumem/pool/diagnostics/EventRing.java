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
 * is read. The claim is the one atomic write of an event: a writer takes the first sequence from a hint on whose slot
 * no newer event was claimed, so that no count is drawn apart from the slot, and none waits for another.
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
	 * Claims the slot of the first sequence from {@code hint} on whose slot no event of that sequence or a later one
	 * was claimed, for {@link #put}: a slot still being written by a writer a whole lap late is passed over, left
	 * without an event for its sequence; -1 where a whole lap of them lies in a row, and the event is not kept.
	 */
	long claim(long hint) {
		long sequence = hint;
		for (int passed = 0;;) {
			int slot = (int) sequence & this.mask;
			long held = (long) STAMPS.getVolatile(this.stamps, slot);
			long heldSequence = Math.abs(held) - 1;
			if (heldSequence >= sequence) {
				sequence = heldSequence + 1;
				passed = 0;
			}
			else if (held < 0) {
				if (++passed > this.mask) {
					return -1;
				}
				sequence++;
			}
			else if (STAMPS.compareAndSet(this.stamps, slot, held, -(sequence + 1))) {
				return sequence;
			}
		}
	}

	/** Writes the event of {@code sequence}, whose slot was {@link #claim claimed}, and lets readers see it. */
	void put(long sequence, MemoryEvent.Type type, long nanos, long bytes, long blockBytes, long buffer, long reserved,
			GpuStream stream, AcquireSites.Lend lend) {
		int slot = (int) sequence & this.mask;
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
		STAMPS.setRelease(this.stamps, slot, sequence + 1);
	}

	/**
	 * Adds to {@code into} the events of the ring's last lap, each as it was when read whole, and answers how many
	 * events the ring was given (the sequence after the newest claimed: events claimed since are left out) and the time
	 * from which it holds every one: its oldest's where it lapped.
	 */
	Lap read(int ring, List<Held> into) {
		long count = 0;
		for (int slot = 0; slot < capacity(); slot++) {
			count = Math.max(count, Math.abs((long) STAMPS.getAcquire(this.stamps, slot)));
		}
		long oldest = count - capacity();
		long from = (oldest > 0) ? Long.MAX_VALUE : Long.MIN_VALUE;
		for (int slot = 0; slot < capacity(); slot++) {
			long stamp = (long) STAMPS.getAcquire(this.stamps, slot);
			if (stamp <= 0 || stamp - 1 < oldest || stamp > count) {
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
		return new Lap(count, from);
	}

	/** What a read found of a ring: the events it was given, and the time from which it holds every one. */
	record Lap(long count, long from) {
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
