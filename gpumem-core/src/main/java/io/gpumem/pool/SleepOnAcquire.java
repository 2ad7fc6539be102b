package io.gpumem.pool;

/** What an acquire, or a use of a lent buffer, does while its pool sleeps ({@link MemoryPool#sleep}). */
public enum SleepOnAcquire {

	/** Wakes the pool first, then goes on. */
	WAKE,

	/** Fails at once with a {@link PoolAsleepException}; the pool sleeps on until woken. */
	REFUSE

}
