package io.gpumem.pool;

import java.util.Arrays;
import java.util.Map;

/**
 * How many requests a pool saw of each size, and their bytes, in log buckets: one below 256 B, then 16 to
 * each power of two (each bucket at most 1/16 of its lower bound wide), the last open-ended. Constant
 * memory, whatever the sizes; what the pool's advisor replays against other settings, taking each bucket's
 * requests at their mean size.
 */
public final class SizeHistogram {

	private static final int SUB_BUCKETS = 16;

	private static final int MIN_SHIFT = 8;

	private static final int MAX_SHIFT = 47;

	/** How many buckets there are. */
	public static final int BUCKETS = 1 + (MAX_SHIFT - MIN_SHIFT) * SUB_BUCKETS;

	private final long[] counts;

	private final long[] bytes;

	SizeHistogram(long[] counts, long[] bytes) {
		this.counts = counts;
		this.bytes = bytes;
	}

	/**
	 * A histogram of these requests: so many of each size.
	 * @throws IllegalArgumentException if a size is not positive or a count negative
	 */
	public static SizeHistogram of(Map<Long, Long> requestsBySize) {
		long[] counts = new long[BUCKETS];
		long[] bytes = new long[BUCKETS];
		requestsBySize.forEach((size, count) -> {
			if (size <= 0 || count < 0) {
				throw new IllegalArgumentException("requests of " + size + " bytes: " + count);
			}
			counts[bucket(size)] += count;
			bytes[bucket(size)] += count * size;
		});
		return new SizeHistogram(counts, bytes);
	}

	/** The bucket of a request of {@code bytes} bytes. */
	static int bucket(long bytes) {
		if (bytes < (1L << MIN_SHIFT)) {
			return 0;
		}
		int shift = 63 - Long.numberOfLeadingZeros(bytes);
		if (shift >= MAX_SHIFT) {
			return BUCKETS - 1;
		}
		return 1 + (shift - MIN_SHIFT) * SUB_BUCKETS + (int) ((bytes >>> (shift - 4)) & (SUB_BUCKETS - 1));
	}

	/** The smallest size counted in the bucket. */
	public static long lowerBound(int bucket) {
		if (bucket == 0) {
			return 1;
		}
		int shift = MIN_SHIFT + (bucket - 1) / SUB_BUCKETS;
		return (long) (SUB_BUCKETS + (bucket - 1) % SUB_BUCKETS) << (shift - 4);
	}

	/** One more than the largest size counted in the bucket. */
	public static long upperBound(int bucket) {
		if (bucket == 0) {
			return 1L << MIN_SHIFT;
		}
		return lowerBound(bucket) + (1L << (MIN_SHIFT + (bucket - 1) / SUB_BUCKETS - 4));
	}

	/** Requests counted in the bucket. */
	public long count(int bucket) {
		return this.counts[bucket];
	}

	/** Bytes requested by the requests counted in the bucket. */
	public long bytes(int bucket) {
		return this.bytes[bucket];
	}

	/** The mean size of the requests counted in the bucket; 0 when there is none. */
	public double meanSize(int bucket) {
		return (this.counts[bucket] > 0) ? (double) this.bytes[bucket] / this.counts[bucket] : 0;
	}

	/** Requests counted in all. */
	public long total() {
		return Arrays.stream(this.counts).sum();
	}

}
