package io.gpumem.pool;

import java.util.List;

/**
 * What a pool counted of its use, which the advice ({@code PoolAdvisor}) replays: the sizes requested, each class's
 * use, and the pool's totals.
 *
 * @param pool the pool's name
 * @param requestSizes the sizes requested
 * @param classes each class, smallest first
 * @param requests the requests in all
 * @param hits the requests served without allocating
 * @param maxCachedBytes the cap on cached bytes
 * @param peakReservedBytes the most bytes the pool reserved at once
 */
public record PoolUsage(String pool, SizeHistogram requestSizes, List<ClassUse> classes, long requests, long hits,
		long maxCachedBytes, long peakReservedBytes) {

	/**
	 * A class's use: its misses, those that met it with fewer buffers than ever before (cold), and the most
	 * buffers it had in use at once.
	 */
	public record ClassUse(long classBytes, long misses, long coldMisses, long peakInUse) {
	}

}
