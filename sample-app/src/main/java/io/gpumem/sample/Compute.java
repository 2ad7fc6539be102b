package io.gpumem.sample;

import java.time.Duration;

import org.springframework.stereotype.Component;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.backend.GpuBackend;
import io.gpumem.pool.MemoryClaim;
import io.gpumem.pool.MemoryPool;
import io.gpumem.reduction.ReductionBufferCache;
import io.gpumem.sample.kernels.Kernels;
import io.gpumem.sample.limits.Deadline;
import io.gpumem.transfer.Transfers;

/**
 * What a request needs to run on the device: admission, the backend for its stream, the device pool,
 * transfers through the pinned pool, the reduction-buffer cache, the kernels and the request limits. A request
 * claims the device memory of its buffers before it touches the device, so that it never holds some while waiting
 * for the rest; the admission's permits then bound how many run at once, a limit of the CPU.
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
		return this.admission.enter(wait(deadline));
	}

	/**
	 * A claim on the device pool for buffers of {@code bytes} each, waiting in line at most the admission's wait or
	 * until the deadline.
	 * @throws io.gpumem.admission.GpuAdmissionException if its turn did not come in time, with a retry-after
	 * @throws io.gpumem.memory.GpuOutOfMemoryException if the buffers together exceed the device
	 */
	public MemoryClaim claim(Deadline deadline, long... bytes) {
		long total = 0;
		for (long each : bytes) {
			total += this.devicePool.blockSize(each);
		}
		return this.devicePool.claim(total, wait(deadline));
	}

	private Duration wait(Deadline deadline) {
		deadline.check();
		Duration remaining = deadline.remaining();
		return (remaining.compareTo(this.admission.maxWait()) < 0) ? remaining : this.admission.maxWait();
	}

}
