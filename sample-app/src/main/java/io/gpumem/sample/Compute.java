package io.gpumem.sample;

import org.springframework.stereotype.Component;

import io.gpumem.backend.GpuBackend;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.reduction.ReductionBufferCache;
import io.gpumem.sample.kernels.Kernels;
import io.gpumem.transfer.Transfers;

/**
 * What a request needs to run on the device: the backend for its stream, the device pool, transfers
 * through the pinned pool, the reduction-buffer cache, the kernels and the request limits.
 */
@Component
@ConditionalOnGpumem
public record Compute(GpuBackend backend, StratifiedMemoryPool devicePool, Transfers transfers,
		ReductionBufferCache reductions, Kernels kernels, SampleProperties limits) {
}
