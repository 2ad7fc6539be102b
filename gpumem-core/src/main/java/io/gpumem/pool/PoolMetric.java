package io.gpumem.pool;

import io.gpumem.memory.MemoryKind;

/**
 * The read-only view of a pool that the endpoint, metrics and health read: nothing reaches into a
 * pool's internals but through this.
 */
public interface PoolMetric {

	/** The pool's name, unique in an application, such as "device". */
	String name();

	/** The kind of memory the pool lends. */
	MemoryKind kind();

	/** A consistent snapshot of the pool's counters. */
	PoolStatistics statistics();

}
