package io.gpumem.pool;

import java.time.Duration;

import io.gpumem.memory.GpuOutOfMemoryException;

/**
 * What a pool offers an admission that lets requests in by the bytes they need, and nothing else: its reach, what it
 * lends, a hook for when memory comes back, and lends on an account ({@link MemoryPool#supply()}).
 */
public interface MemorySupply {

	/** The pool's name. */
	String name();

	/** The bytes a buffer of {@code bytes} takes of the pool ({@link MemoryPool#blockSize}). */
	long blockSize(long bytes);

	/** The most bytes the pool could hold: its device's capacity or its budget, the smaller. */
	long reachBytes();

	/**
	 * The failure of a request of {@code bytes} larger than the reach, as an acquire of it would fail, counted and
	 * told to the pool's listeners; null for one within reach.
	 */
	GpuOutOfMemoryException refuseBeyondReach(long bytes);

	/**
	 * Bytes the pool lends, and holds for buffers closed after stream work still to run: what no trim reaches. Takes
	 * back first the blocks whose stream work completed, and the leaked ones, where {@code settleFirst}.
	 */
	long lentBytes(boolean settleFirst);

	/**
	 * Runs {@code hook} each time memory may have come back to the pool: a buffer closed, a late block taken back, a
	 * trim; on the thread that gave it back, which it must not hold up.
	 */
	void whenMemoryReturns(Runnable hook);

	/** Whether the pool was closed: it lends nothing more. */
	boolean isClosed();

	/** The pool's leak detection level, which an admission watches its own grants at. */
	LeakDetection leakDetection();

	/**
	 * Lends a buffer of {@code bytes} bytes on {@code account}, which is told its block's bytes once the lend ends,
	 * waiting at most {@code maxWait} for memory, as {@link MemoryPool#acquire(long, Duration)}.
	 */
	PooledBuffer acquire(long bytes, Duration maxWait, LendAccount account);

}
