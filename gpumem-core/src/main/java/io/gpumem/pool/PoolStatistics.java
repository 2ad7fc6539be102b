package io.gpumem.pool;

import java.util.List;

import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.arena.Span;

/**
 * An immutable snapshot of a pool: what the endpoint, the metrics binder and the health indicator
 * read. Built by {@link #of}, its totals are the sums of its size-class rows, the requests above the top class
 * and (for cached bytes) the segments' free bytes, and {@code inUseBytes + cachedBytes == reservedBytes}; a pool that
 * lends while it is read gives its reserved bytes as one reading instead ({@link #held}), never above what its
 * allocator held at an instant of the read, and the rows, each a recent reading, add up to the totals once it is
 * quiet.
 *
 * @param name the pool's name
 * @param kind the kind of memory it lends
 * @param requests acquires, including those above the top size class
 * @param hits acquires served from cached memory: the free lists, cached large blocks or free bytes of segments
 * @param misses acquires that went to the allocator ({@code requests == hits + misses})
 * @param missNanos time misses spent getting memory from the allocator, retries and waits included
 * @param returns buffers closed back to the pool
 * @param inUseBytes bytes of the blocks lent out ({@code reservedBytes - cachedBytes})
 * @param inUseBuffers buffers lent out
 * @param cachedBytes bytes cached, ready to lend: in the free lists, in large blocks and free in segments
 * @param cachedBuffers buffers cached
 * @param reservedBytes bytes the pool holds from its allocator
 * @param peakReservedBytes the highest {@code reservedBytes} seen
 * @param maxCachedBytes the most bytes the pool keeps cached ({@code max-cached}); {@link Long#MAX_VALUE} for no cap
 * @param trimmedBytes bytes given back to the allocator by trims, idle trims and caps
 * @param allocationFailures acquires that failed for want of memory, after retries, or with their allocator's error;
 * not those refused while the pool sleeps
 * @param leakedBuffers buffers reclaimed after becoming unreachable without close
 * @param memoryWaits acquires that waited for memory to be returned ({@link PoolConfig#maxWait()})
 * @param sizeClasses one row per size class, smallest first
 * @param aboveTopClass requests above the top size class, and the blocks that serve them
 * @param segments the arena the size classes' blocks are cut from
 */
public record PoolStatistics(String name, MemoryKind kind, long requests, long hits, long misses, long missNanos,
		long returns, long inUseBytes, long inUseBuffers, long cachedBytes, long cachedBuffers, long reservedBytes,
		long peakReservedBytes, long maxCachedBytes, long trimmedBytes, long allocationFailures, long leakedBuffers,
		Waits memoryWaits, List<SizeClassStatistics> sizeClasses, AboveTopClass aboveTopClass, Segments segments) {

	public PoolStatistics {
		sizeClasses = List.copyOf(sizeClasses);
	}

	/**
	 * Statistics whose totals are the sums of {@code sizeClasses} and {@code aboveTopClass}, the cached bytes
	 * with the free bytes of the {@code segments}, which belong to no class; the other figures are the pool's
	 * as a whole.
	 */
	public static PoolStatistics of(String name, MemoryKind kind, List<SizeClassStatistics> sizeClasses,
			AboveTopClass aboveTopClass, Segments segments, long missNanos, long peakReservedBytes,
			long maxCachedBytes, long trimmedBytes, long allocationFailures, long leakedBuffers, Waits memoryWaits) {
		AboveTopClass sum = aboveTopClass;
		for (SizeClassStatistics row : sizeClasses) {
			sum = new AboveTopClass(sum.requests + row.requests(), sum.hits + row.hits(), sum.misses + row.misses(),
					sum.returns + row.returns(), sum.inUseBuffers + row.inUseBuffers(),
					sum.inUseBytes + row.inUseBytes(), sum.cachedBuffers + row.cachedBuffers(),
					sum.cachedBytes + row.cachedBytes());
		}
		long cachedBytes = sum.cachedBytes + segments.freeBytes();
		return new PoolStatistics(name, kind, sum.requests, sum.hits, sum.misses, missNanos, sum.returns,
				sum.inUseBytes, sum.inUseBuffers, cachedBytes, sum.cachedBuffers, sum.inUseBytes + cachedBytes,
				peakReservedBytes, maxCachedBytes, trimmedBytes, allocationFailures, leakedBuffers, memoryWaits,
				sizeClasses, aboveTopClass, segments);
	}

	/**
	 * These statistics with {@code reservedBytes} the pool's reading of what it holds, taken once: the cached bytes
	 * as read, at most that, and the rest in use, so that {@code inUseBytes + cachedBytes == reservedBytes} in every
	 * read.
	 */
	PoolStatistics held(long reservedBytes) {
		long cached = Math.min(this.cachedBytes, reservedBytes);
		return new PoolStatistics(this.name, this.kind, this.requests, this.hits, this.misses, this.missNanos,
				this.returns, reservedBytes - cached, this.inUseBuffers, cached, this.cachedBuffers, reservedBytes,
				Math.max(this.peakReservedBytes, reservedBytes), this.maxCachedBytes, this.trimmedBytes,
				this.allocationFailures, this.leakedBuffers, this.memoryWaits, this.sizeClasses,
				this.aboveTopClass, this.segments);
	}

	/** Hits over requests, 0 before the first request. */
	public double hitRate() {
		return (this.requests != 0) ? (double) this.hits / this.requests : 0.0;
	}

	/**
	 * Requests above the top size class: each is served by a cached block at most 20 MiB larger, or by a
	 * block allocated to its size, which is cached when closed.
	 *
	 * @param requests acquires above the top class
	 * @param hits those served by a cached block
	 * @param misses those that allocated
	 * @param returns such buffers closed
	 * @param inUseBuffers blocks lent out
	 * @param inUseBytes their bytes
	 * @param cachedBuffers blocks cached
	 * @param cachedBytes their bytes
	 */
	public record AboveTopClass(long requests, long hits, long misses, long returns, long inUseBuffers,
			long inUseBytes, long cachedBuffers, long cachedBytes) {

		/** No requests above the top class: for pools that have none. */
		public static final AboveTopClass NONE = new AboveTopClass(0, 0, 0, 0, 0, 0, 0, 0);

	}

	/**
	 * The arena's segments: allocations made in large steps and cut into the size classes' blocks, which
	 * go back to the allocator only whole; or, for expandable segments, each run of granules mapped into their
	 * ranges, which go back a run mapped with one call at a time.
	 *
	 * @param segments segments held
	 * @param segmentBytes their bytes
	 * @param freeBytes bytes of them free in the arena (the small classes' buffers cached in the free lists
	 * are not among them)
	 * @param largestFreeBlock the largest run of free bytes in one segment
	 * @param addressBytes the addresses reserved for expandable segments, of which {@code segmentBytes} are mapped;
	 * 0 for segments that are allocations
	 */
	public record Segments(long segments, long segmentBytes, long freeBytes, long largestFreeBlock, long addressBytes) {

		/** No segments: for caches that cut nothing. */
		public static final Segments NONE = new Segments(0, 0, 0, 0, 0);

		/**
		 * The statistics of an arena's pieces of memory, which hold {@code bytes}, {@code freeBytes} of them free, in
		 * {@code addressBytes} of reserved ranges.
		 */
		public static Segments of(List<Span.Piece> pieces, long bytes, long freeBytes, long addressBytes) {
			long largest = 0;
			for (Span.Piece piece : pieces) {
				for (Span.Part part : piece.parts()) {
					largest = part.lent() ? largest : Math.max(largest, part.bytes());
				}
			}
			return new Segments(pieces.size(), bytes, freeBytes, largest, addressBytes);
		}

		/**
		 * How scattered the free bytes are: 1 − largest free block / free bytes; 0 when they lie in one run
		 * or there are none, near 1 when no large request could use them.
		 */
		public double fragmentation() {
			return (this.freeBytes != 0) ? 1.0 - (double) this.largestFreeBlock / this.freeBytes : 0.0;
		}

	}

	/**
	 * Acquires that found no memory and waited for some to be returned: by other requests within
	 * {@code max-wait}, and before failing for good by stream work and by the garbage collector.
	 *
	 * @param waits acquires that waited within {@code max-wait}, served in the end or not
	 * @param timeouts those waits that ran out, each of which then failed as out of memory
	 * @param waitNanos time spent in those waits, all acquires together
	 * @param gcRequests acquires about to fail that asked the garbage collector for buffers dropped without
	 * close, and waited for it
	 * @param streamWaits acquires about to fail that waited for the work of buffers closed after a stream
	 * @param gaveWay waiting acquires told to give way ({@link io.gpumem.memory.GpuRetryOutOfMemoryException}), where
	 * every thread holding memory of the pool waited for more
	 */
	public record Waits(long waits, long timeouts, long waitNanos, long gcRequests, long streamWaits, long gaveWay) {

		/** No waits: for pools that never wait. */
		public static final Waits NONE = new Waits(0, 0, 0, 0, 0, 0);

	}

}
