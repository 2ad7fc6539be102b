package io.gpumem.pool.arena;

/** What an arena counts in its pool's statistics. */
public interface ArenaCounters {

	/** The counts of the blocks a new tier cuts, per class, which the pool sums. */
	ReservedBlocks reserved();

	/**
	 * After a request of a class got a block without the pool allocating, where its tier never held more of the
	 * class: the blocks reserved are the class's use at that moment; {@code allocated}: whether the pool allocated.
	 */
	void countUse(int classIndex, boolean allocated);

	/** Counts {@code bytes} given back to the allocator. */
	void countTrimmed(long bytes);

}
