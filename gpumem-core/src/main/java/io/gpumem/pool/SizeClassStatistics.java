package io.gpumem.pool;

/**
 * A snapshot of one size class of a pool.
 *
 * @param sizeBytes the class's buffer size
 * @param requests acquires served by this class
 * @param hits acquires served from cached buffers
 * @param misses acquires that allocated a new block
 * @param returns buffers closed back to this class
 * @param inUseBuffers buffers lent out
 * @param cachedBuffers buffers cached, ready to lend
 */
public record SizeClassStatistics(long sizeBytes, long requests, long hits, long misses, long returns,
		long inUseBuffers, long cachedBuffers) {

	public long inUseBytes() {
		return this.inUseBuffers * this.sizeBytes;
	}

	public long cachedBytes() {
		return this.cachedBuffers * this.sizeBytes;
	}

	/** Hits over requests, 0 before the first request. */
	public double hitRate() {
		return (this.requests != 0) ? (double) this.hits / this.requests : 0.0;
	}

}
