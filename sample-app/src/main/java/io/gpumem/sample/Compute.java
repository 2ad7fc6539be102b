package io.gpumem.sample;

import java.time.Duration;

import org.springframework.stereotype.Component;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.backend.GpuBackend;
import io.gpumem.pool.MemoryPool;
import io.gpumem.reduction.ReductionBufferCache;
import io.gpumem.sample.kernels.Kernels;
import io.gpumem.sample.limits.Deadline;
import io.gpumem.transfer.Transfers;

/**
 * What a request needs to run on the device: admission, the backend for its stream, the device pool,
 * transfers through the pinned pool, the reduction-buffer cache, the kernels and the request limits.
 */
@Component
@ConditionalOnGpumem
public record Compute(GpuAdmission admission, GpuBackend backend, MemoryPool devicePool,
		Transfers transfers, ReductionBufferCache reductions, Kernels kernels, SampleProperties limits) {

	/**
	 * A permit to run on the device, waiting at most the admission's wait or until the deadline.
	 * @throws io.gpumem.admission.GpuAdmissionException if none came free in time
	 */
	public GpuAdmission.Permit admit(Deadline deadline) {
		deadline.check();
		Duration remaining = deadline.remaining();
		return this.admission.enter((remaining.compareTo(this.admission.maxWait()) < 0) ? remaining
				: this.admission.maxWait());
	}

}
