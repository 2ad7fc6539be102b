package io.gpumem.docs.examples;

import io.gpumem.backend.GpuBackend;
import io.gpumem.buffer.GpuBuffer;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.stream.GpuStream;

/** The acquire on a request's stream of docs/pools.md. */
class StreamOrderedExample {

	void run(GpuBackend backend, MemoryPool devicePool, GpuBuffer staging, long bytes, Kernels kernels) {
		// tag::stream-ordered[]
		try (GpuStream stream = backend.createStream();
				PooledBuffer input = devicePool.acquire(bytes, stream)) { // or StreamOrder.bind(stream) around a scope
			stream.copy(staging, input);
			kernels.run(stream, input);
		}
		// end::stream-ordered[]
	}

	interface Kernels {

		void run(GpuStream stream, GpuBuffer input);

	}

}
