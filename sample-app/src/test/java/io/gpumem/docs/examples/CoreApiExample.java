package io.gpumem.docs.examples;

import java.nio.ByteBuffer;
import java.time.Duration;

import io.gpumem.allocator.LimitingAllocator;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PoolPreset;
import io.gpumem.pool.PoolStatistics;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;

/** The pool without Spring of docs/core-api.md. */
class CoreApiExample {

	// tag::core[]
	static PoolStatistics lendOnce() {
		HostBackend backend = new HostBackend(4L << 30);                       // an emulated 4 GiB device
		MemoryAllocator device = new LimitingAllocator(backend.allocator(MemoryKind.DEVICE), 3L << 30);
		PoolConfig config = PoolConfig.builder("device").preset(PoolPreset.DEFAULT)
			.idleTrimAfter(Duration.ofMinutes(5)).build();
		try (StratifiedMemoryPool pool = new StratifiedMemoryPool(device, config)) {
			pool.warm(65536, 100);
			try (PooledBuffer buffer = pool.acquire(1000 * Float.BYTES)) {   // rounded up to a 4 KiB class
				buffer.copyFrom(new float[1000]);
				ByteBuffer memory = buffer.unwrap(ByteBuffer.class);          // the native handle
			}
			PoolStatistics stats = pool.statistics();                         // immutable snapshot, per class too
			pool.trim(0);                                                     // release what is cached, LRU first
			return stats;
		}
	}
	// end::core[]

}
