package io.gpumem.pool;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The stripe a thread works on, the same number in every pool: handed out round-robin at a thread's
 * first use, so that the first threads never share a stripe, and moved on when a thread finds its
 * stripe's lock taken, as {@link java.util.concurrent.atomic.LongAdder} moves a contended thread to
 * another cell.
 */
final class StripeIndex {

	private static final AtomicInteger NEXT = new AtomicInteger();

	private static final ThreadLocal<int[]> INDEX = ThreadLocal.withInitial(() -> new int[] { NEXT.getAndIncrement() });

	private StripeIndex() {
	}

	static int current() {
		return INDEX.get()[0];
	}

	/** Moves the calling thread to the next unused index, after it met another thread on its stripe. */
	static void advance() {
		INDEX.get()[0] = NEXT.getAndIncrement();
	}

}
