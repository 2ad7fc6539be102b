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
 * transfers through the pinned pool, the reduction-buffer cache, the kernels and the request limits. A request is
 * admitted once, for the device memory of its buffers and a permit, before it touches the device, so that it never
 * holds some memory while waiting for the rest; the permits bound how many run at once, a limit of the CPU.
 */
@Component
@ConditionalOnGpumem
public record Compute(GpuAdmission admission, GpuBackend backend, MemoryPool devicePool,
		Transfers transfers, ReductionBufferCache reductions, Kernels kernels, SampleProperties limits) {

	/**
	 * Admission to run on the device with buffers of {@code bytes} each from the device pool, waiting in line at most
	 * the admission's wait or until the deadline; the request acquires its buffers from the permit.
	 * @throws io.gpumem.admission.GpuAdmissionException if its turn did not come in time, saying whether a permit or
	 * its bytes were lacking, with a retry-after
	 * @throws io.gpumem.memory.GpuOutOfMemoryException if the buffers together exceed the device
	 */
	public GpuAdmission.Permit admit(Deadline deadline, long... bytes) {
		long total = 0;
		for (long each : bytes) {
			total += this.devicePool.blockSize(each);
		}
		return this.admission.enter(total, wait(deadline));
	}

	private Duration wait(Deadline deadline) {
		deadline.check();
		Duration remaining = deadline.remaining();
		return (remaining.compareTo(this.admission.maxWait()) < 0) ? remaining : this.admission.maxWait();
	}

}
