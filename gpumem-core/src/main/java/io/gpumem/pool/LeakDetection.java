package io.gpumem.pool;

/**
 * How a pool watches for buffers that become unreachable without being closed, as Netty's leak
 * detector levels do.
 */
public enum LeakDetection {

	/** Leaked buffers are not noticed; their memory stays counted as in use. */
	DISABLED,

	/**
	 * Every buffer of 64 KiB or more is watched, since GPU memory is scarcer than heap; of smaller blocks,
	 * the first lend and one in 128 after it, as Netty's {@code simple} samples. A watched buffer that
	 * leaks is reclaimed into the pool, counted, and reported with a warning; one that was not watched
	 * stays counted as in use. A code path that leaks small buffers soon makes the pool allocate new
	 * blocks, whose first lend is watched, so it is found at once.
	 */
	SIMPLE,

	/**
	 * Every buffer is watched, and the warning names where the leaked buffer was acquired (costs a
	 * phantom reference and a stack trace per acquire).
	 */
	PARANOID

}
