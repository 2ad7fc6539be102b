package io.gpumem.pool;

/**
 * A snapshot of one size class of a pool. Its bytes are the blocks' as the pool books them (a class's size
 * rounded up to 256 bytes up to 64 KiB, the request's size so rounded above), so that the rows and the
 * requests above the top class add up to the pool's in-use bytes and, with the segments' free bytes, to its
 * cached bytes.
 *
 * @param sizeBytes the class's buffer size
 * @param requests acquires whose size rounds up to this class
 * @param hits those served from cached memory, of this class or (before a miss) of the next
 * @param misses those that allocated a new block
 * @param returns buffers of this class closed back to the pool
 * @param inUseBuffers blocks of this class lent out
 * @param inUseBytes their bytes
 * @param cachedBuffers blocks of this class cached, ready to lend
 * @param cachedBytes their bytes
 */
public record SizeClassStatistics(long sizeBytes, long requests, long hits, long misses, long returns,
		long inUseBuffers, long inUseBytes, long cachedBuffers, long cachedBytes) {

	/** Hits over requests, 0 before the first request. */
	public double hitRate() {
		return (this.requests != 0) ? (double) this.hits / this.requests : 0.0;
	}

}
