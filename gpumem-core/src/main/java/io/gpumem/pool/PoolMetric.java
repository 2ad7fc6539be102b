package io.gpumem.pool;

import io.gpumem.memory.MemoryKind;

/**
 * The read-only face of a pool that the endpoint, metrics and health read: nothing reaches into a pool's
 * internals but through its {@link #statistics()}, whose figures are read from the pool's counters and tiers
 * in one place (as Netty's {@code PoolArenaMetric} is the read-only face of its arenas).
 */
public interface PoolMetric {

	/** The pool's name, unique in an application, such as "device". */
	String name();

	/** The kind of memory the pool lends. */
	MemoryKind kind();

	/** A snapshot of the pool's figures, exact when no thread is acquiring or releasing. */
	PoolStatistics statistics();

}
