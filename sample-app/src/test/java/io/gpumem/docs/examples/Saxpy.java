package io.gpumem.docs.examples;

import java.io.IOException;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.core.io.Resource;
import org.springframework.stereotype.Service;

import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.CudaKernel;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.stream.GpuStream;
import io.gpumem.transfer.Transfers;

// tag::readme[]
@Service
@ConditionalOnProperty(name = "gpumem.backend", havingValue = "cuda")   // the host backend runs no PTX
class Saxpy {

	private final GpuBackend backend;
	private final MemoryPool pool;
	private final Transfers transfers;
	private final CudaKernel kernel;

	Saxpy(GpuBackend backend, MemoryPool pool, Transfers transfers, @Value("classpath:kernels/saxpy.ptx") Resource ptx)
			throws IOException {
		this.backend = backend;
		this.pool = pool;
		this.transfers = transfers;
		this.kernel = ((CudaBackend) backend).loadModule(ptx.getContentAsByteArray()).kernel("saxpy");
	}

	float[] saxpy(float alpha, float[] x, float[] y) {
		long bytes = (long) x.length * Float.BYTES;
		try (GpuStream stream = this.backend.createStream();
				PooledBuffer xs = this.pool.acquire(bytes, stream);
				PooledBuffer ys = this.pool.acquire(bytes, stream)) {
			this.transfers.upload(stream, x, xs, 0);
			this.transfers.upload(stream, y, ys, 0);
			this.kernel.launch(stream, (x.length + 255) / 256, 256, alpha, xs, ys, ys, x.length);
			this.transfers.download(stream, ys, 0, y);
			return y;
		}
	}

}
// end::readme[]
