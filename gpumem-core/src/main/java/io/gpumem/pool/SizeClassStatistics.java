package io.gpumem.pool;

/**
 * A snapshot of one size class of a pool.
 *
 * @param sizeBytes the class's buffer size
 * @param requests acquires whose size rounds up to this class
 * @param hits those served from cached buffers, of this class or (before a miss) of the next
 * @param misses those that allocated a new block
 * @param returns buffers of this class closed back to the pool
 * @param inUseBuffers buffers of this class lent out
 * @param cachedBuffers buffers of this class cached, ready to lend
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
