package io.gpumem.pool;

import io.gpumem.memory.MemoryKind;

/**
 * The read-only view of a pool that the endpoint, metrics and health read: nothing reaches into a
 * pool's internals but through this. The single figures serve meters, which read one figure at a time;
 * a pool that can answer one without a whole snapshot overrides it (as Netty's {@code PoolArenaMetric}
 * answers each figure on its own).
 */
public interface PoolMetric {

	/** The pool's name, unique in an application, such as "device". */
	String name();

	/** The kind of memory the pool lends. */
	MemoryKind kind();

	/** A snapshot of the pool's counters, consistent when no thread is acquiring or releasing. */
	PoolStatistics statistics();

	/** Bytes of the buffers lent out. */
	default long usedBytes() {
		return statistics().inUseBytes();
	}

	/** Buffers lent out. */
	default long usedBuffers() {
		return statistics().inUseBuffers();
	}

	/** Buffers cached, ready to lend. */
	default long cachedBuffers() {
		return statistics().cachedBuffers();
	}

	/** Acquires served from cached buffers. */
	default long hits() {
		return statistics().hits();
	}

	/** Acquires that went to the allocator. */
	default long misses() {
		return statistics().misses();
	}

	/** Bytes given back to the allocator by trims, idle trims and caps. */
	default long trimmedBytes() {
		return statistics().trimmedBytes();
	}

	/** Acquires that failed for want of memory, after retries. */
	default long allocationFailures() {
		return statistics().allocationFailures();
	}

	/** Time spent getting memory from the allocator on misses, failed ones included; 0 if not measured. */
	default long missNanos() {
		return 0;
	}

	/** Buffers found unreachable while still lent out, reclaimed by leak detection. */
	default long leakedBuffers() {
		return statistics().leakedBuffers();
	}

	/** The most bytes the pool keeps cached; {@link Long#MAX_VALUE} for no limit. */
	default long maxCachedBytes() {
		return Long.MAX_VALUE;
	}

	/** Acquires that waited for memory to be returned, from {@link #statistics()}. */
	default PoolStatistics.Waits memoryWaits() {
		return statistics().memoryWaits();
	}

	/** The segments the pool's blocks are cut from; {@link PoolStatistics.Segments#NONE} for a pool that cuts none. */
	default PoolStatistics.Segments segments() {
		return statistics().segments();
	}

}
