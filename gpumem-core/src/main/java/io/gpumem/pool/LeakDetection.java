package io.gpumem.pool;

/**
 * How a pool watches for buffers that become unreachable without being closed, as Netty's leak
 * detector levels do.
 */
public enum LeakDetection {

	/** Leaked buffers are not noticed; their memory stays counted as in use. */
	DISABLED,

	/**
	 * One acquire in 128 per thread is watched, and every buffer above the top class, as Netty's
	 * {@code simple} samples: a watched buffer that leaks is reclaimed into the pool, counted, and
	 * reported with a warning; one that was not watched stays counted as in use. A code path that leaks
	 * usually leaks on every pass, so it is found soon, at a cost the hit path does not notice.
	 */
	SIMPLE,

	/**
	 * Every buffer is watched, and the warning names where the leaked buffer was acquired (costs a
	 * phantom reference and a stack trace per acquire).
	 */
	PARANOID

}
