package io.gpumem.pool;

import java.util.concurrent.atomic.AtomicInteger;

import io.gpumem.pool.arena.Padding;

/**
 * What the pools keep of each thread that uses them, the same in every pool: the stripe of the free
 * lists it works on, handed out round-robin at its first use (so that the first threads never share a
 * stripe) and moved on when it finds its stripe's lock taken, as
 * {@link java.util.concurrent.atomic.LongAdder} moves a contended thread to another cell; the count
 * of its acquires, on which leak detection samples. Only the thread itself writes its state, and it
 * caches no memory: nothing here needs a trim to reach it. The state is padded by 128 bytes on both
 * sides, so that the states of two threads never share a cache line, wherever the collector moves them.
 */
final class ThreadState extends ThreadStateFields {

	private static final AtomicInteger NEXT = new AtomicInteger();

	private static final ThreadLocal<ThreadState> CURRENT = ThreadLocal.withInitial(ThreadState::new);

	@SuppressWarnings("unused")
	private long p01, p02, p03, p04, p05, p06, p07, p08, p09, p10, p11, p12, p13, p14, p15, p16;

	private ThreadState() {
		this.stripe = NEXT.getAndIncrement();
	}

	static ThreadState current() {
		return CURRENT.get();
	}

	/** Moves the calling thread to the next unused stripe, after it met another thread on its own. */
	static void moveOn() {
		CURRENT.get().stripe = NEXT.getAndIncrement();
	}

}

/** The fields of a {@link ThreadState}, after padding. */
abstract class ThreadStateFields extends Padding {

	/** The thread's stripe, before masking by a pool's stripe count. */
	int stripe;

	/** The thread's acquires so far. */
	int acquires;

}
