package io.gpumem.pool.recovery;

/** What an {@link OutOfMemoryChain} counts in its pool's statistics. */
public interface RecoveryCounters {

	/** Counts an acquire that begins to wait for memory. */
	void countWait();

	/** Counts the end of a wait for memory that took {@code nanos}, served or, when {@code timedOut}, not. */
	void countWaitEnd(long nanos, boolean timedOut);

	/** Counts an acquire about to fail that waited for the work of buffers closed after a stream. */
	void countStreamWait();

	/** Counts an acquire about to fail that asked the garbage collector for buffers dropped without close. */
	void countGcRequest();

	/** Counts an acquire told to give way, where every thread holding memory of the pool waited for more. */
	void countGiveWay();

	/**
	 * Counts an allocation that failed otherwise than for want of memory, with {@code failure}, unless the pool's own
	 * state refused it rather than its allocator: the pool knows which.
	 */
	void countAllocationFailure(RuntimeException failure);

}
