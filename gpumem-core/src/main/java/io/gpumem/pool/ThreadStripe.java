package io.gpumem.pool;

/**
 * The stripe of the pools' free lists that the calling thread works on: what a replay of a pool's history moves to
 * repeat each recorded thread's requests from that thread's stripe.
 */
public final class ThreadStripe {

	private ThreadStripe() {
	}

	/** The calling thread's stripe, before masking by a pool's stripe count. */
	public static int current() {
		return ThreadState.current().stripe;
	}

	/** Moves the calling thread to {@code stripe}, until it meets another thread there or is moved again. */
	public static void set(int stripe) {
		ThreadState.current().stripe = stripe;
	}

}
