package io.gpumem.benchmarks;

import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;

/** The operation every pool benchmark measures: one acquire and one release. */
final class PoolHit {

	private PoolHit() {
	}

	/** Acquires a buffer of {@code bytes} and closes it; answers its size, for the benchmark to return. */
	static long acquireAndRelease(StratifiedMemoryPool pool, long bytes) {
		PooledBuffer buffer = pool.acquire(bytes);
		long size = buffer.size();
		buffer.close();
		return size;
	}

}
