package io.gpumem.pool;

import io.gpumem.pool.arena.Block;

/**
 * What a pool keeps cached, stated once: which classes the front free lists keep, at most how many blocks of
 * each ({@code max-cached-buffers}) and how many bytes ({@code max-cached}), and which cached class a miss may
 * borrow from. {@code max-cached} bounds the bytes cached in all: free segments go back to the allocator beyond
 * it, and a returned block that is an allocation of its own (above the top class) is kept only within it;
 * a front class's block, which holds its span of a segment whether it is kept or not, is kept while the free
 * lists and shelves hold no more than it.
 */
final class CachePolicy {

	/** Returns to the free lists, all stripes together, between two sweeps of a stripe ({@link #sweepReturns}). */
	private static final int SWEEP_RETURNS = 256;

	/** The fewest returns on a stripe between two of its sweeps, however many stripes there are. */
	private static final int MIN_SWEEP_RETURNS = 8;

	/** A miss may take a cached block of the next class up when that is at most this many times larger. */
	private static final double MAX_UPGRADE = 1.25;

	private final boolean[] front;

	private final int frontClasses;

	private final boolean[] upgrades;

	private final long[] maxBuffers;

	private final long maxBytes;

	CachePolicy(PoolConfig config) {
		SizeClassLadder ladder = config.sizeClasses();
		int classes = ladder.count();
		this.front = new boolean[classes];
		this.maxBuffers = new long[classes];
		int frontClasses = 0;
		for (int c = 0; c < classes; c++) {
			this.front[c] = ladder.size(c) <= PoolConfig.FREE_LISTS_LIMIT;
			frontClasses += this.front[c] ? 1 : 0;
			this.maxBuffers[c] = config.maxCachedBuffers().getOrDefault(ladder.size(c), Integer.MAX_VALUE);
		}
		this.frontClasses = frontClasses;
		this.upgrades = new boolean[classes];
		for (int c = 0; c + 1 < classes; c++) {
			this.upgrades[c] = this.front[c + 1] && ladder.size(c + 1) <= MAX_UPGRADE * ladder.size(c);
		}
		this.maxBytes = config.maxCachedBytes();
	}

	/**
	 * Whether closed blocks of the class ({@link Block#ABOVE_TOP_CLASS}: never) stay cached in the free lists' stacks
	 * rather than going back to the arena, but for a stripe's last block ({@link LastBlocks}).
	 */
	boolean front(int classIndex) {
		return classIndex != Block.ABOVE_TOP_CLASS && this.front[classIndex];
	}

	/** How many classes the free lists keep: the smallest ones, up to {@link PoolConfig#FREE_LISTS_LIMIT}. */
	int frontClasses() {
		return this.frontClasses;
	}

	/** Whether a miss of the class may take a cached block of the next class. */
	boolean upgrades(int classIndex) {
		return this.upgrades[classIndex];
	}

	/** The most bytes cached in all. */
	long maxBytes() {
		return this.maxBytes;
	}

	/**
	 * Whether one more block of {@code blockSize} bytes of a class (or {@link Block#ABOVE_TOP_CLASS}) may be cached, with
	 * {@code cachedInClass} of the class and {@code cachedBytes} cached now: the hot path's question, asked
	 * without a division.
	 */
	boolean fits(int classIndex, long blockSize, long cachedInClass, long cachedBytes) {
		return cachedBytes <= this.maxBytes - blockSize && cachedInClass < maxBuffers(classIndex);
	}

	/** How many more blocks {@link #fits} would let in, one after another. */
	long room(int classIndex, long blockSize, long cachedInClass, long cachedBytes) {
		return Math.min(Math.max(0, this.maxBytes - cachedBytes) / blockSize,
				Math.max(0, maxBuffers(classIndex) - cachedInClass));
	}

	/** At most how many blocks of a class are cached: {@code max-cached-buffers} for the front's classes only. */
	private long maxBuffers(int classIndex) {
		return front(classIndex) ? this.maxBuffers[classIndex] : Long.MAX_VALUE;
	}

	/**
	 * Every this many returns on one of {@code stripes} stripes of the free lists ({@value #SWEEP_RETURNS} shared
	 * among them, at least {@value #MIN_SWEEP_RETURNS}), the stripe gives back to the arena three quarters, rounded
	 * up, of each class's blocks that none took since its last sweep. Where each class kept as many blocks as it
	 * once had in use, the free lists held the sum of every class's peak, and the arena only the peak of the sum;
	 * swept, they hold about what each class used lately, and what they give back serves any size (jemalloc's
	 * thread-cache sweep by low-water marks; Netty trims its thread caches the same way).
	 */
	static int sweepReturns(int stripes) {
		return Math.max(MIN_SWEEP_RETURNS, SWEEP_RETURNS / stripes);
	}

	/** Bytes cached beyond {@code max-cached}, which free segments give back. */
	long excess(long cachedBytes) {
		return cachedBytes - this.maxBytes;
	}

}
