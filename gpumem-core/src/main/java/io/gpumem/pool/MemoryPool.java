package io.gpumem.pool;

/**
 * A pool whose cached memory can be trimmed: what the pressure handler shrinks and the endpoint trims,
 * whether a {@link StratifiedMemoryPool} or a cache built on one idea of it.
 */
public interface MemoryPool extends PoolMetric {

	/** Bytes cached, ready to lend: what a trim can give back. */
	long cachedBytes();

	/** Bytes this pool holds from its allocator. */
	long reservedBytes();

	/**
	 * Releases cached memory, least recently used first, until at most {@code keepBytes} stay cached.
	 * @return the bytes released to the allocator
	 * @throws IllegalArgumentException if {@code keepBytes} is negative
	 */
	long trim(long keepBytes);

	/** Adds a listener told of reserved-memory growth and asked to free memory when the allocator refuses. */
	void addListener(PoolListener listener);

}
