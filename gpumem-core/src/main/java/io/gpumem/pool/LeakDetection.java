package io.gpumem.pool;

/**
 * How a pool watches for buffers that become unreachable without being closed, as Netty's leak
 * detector levels do.
 */
public enum LeakDetection {

	/** Leaked buffers are not noticed; their memory stays counted as in use. */
	DISABLED,

	/** Leaked buffers are reclaimed into the pool, counted, and reported with a warning. */
	SIMPLE,

	/** As {@link #SIMPLE}, and the warning names where each leaked buffer was acquired (costs a stack trace per acquire). */
	PARANOID

}
