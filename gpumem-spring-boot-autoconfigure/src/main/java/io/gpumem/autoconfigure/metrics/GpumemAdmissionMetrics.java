package io.gpumem.autoconfigure.metrics;

import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.BaseUnits;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.device.GpuDevice;
import io.gpumem.device.GpumemDevices;

/**
 * Admission of GPU work to every device: work active and waiting, the limit, the bytes admitted and lent on them, the
 * waits, the rejections, the refusals and the permits reclaimed.
 */
public class GpumemAdmissionMetrics extends DeviceMeterBinder {

	public GpumemAdmissionMetrics(GpumemDevices devices) {
		super(devices);
	}

	@Override
	void bind(MeterRegistry registry, String device, GpuDevice gpu) {
		gpu.admission().ifPresent((admission) -> bind(registry, device, admission));
	}

	private static void bind(MeterRegistry registry, String device, GpuAdmission admission) {
		Gauge.builder("gpumem.admission.active", admission, GpuAdmission::active)
			.tags("device", device)
			.description("GPU work holding an admission permit")
			.register(registry);
		Gauge.builder("gpumem.admission.waiting", admission, GpuAdmission::waiting)
			.tags("device", device)
			.description("GPU work waiting for an admission permit")
			.register(registry);
		Gauge.builder("gpumem.admission.limit", admission, GpuAdmission::maxConcurrent)
			.tags("device", device)
			.description("The most GPU work admitted at once; 0 for no limit")
			.register(registry);
		FunctionTimer.builder("gpumem.admission.wait", admission, GpuAdmission::waits,
				(a) -> a.waitTime().toNanos(), TimeUnit.NANOSECONDS)
			.tags("device", device)
			.description("Waits for an admission permit, admitted or not")
			.register(registry);
		FunctionCounter.builder("gpumem.admission.rejections", admission, GpuAdmission::rejections)
			.tags("device", device)
			.description("GPU work turned away after waiting for a permit or its bytes")
			.register(registry);
		Gauge.builder("gpumem.admission.claimed", admission, (a) -> a.statistics().claimedBytes())
			.tags("device", device)
			.baseUnit(BaseUnits.BYTES)
			.description("Bytes of the open permits: memory admitted for requests before they acquire it")
			.register(registry);
		FunctionCounter.builder("gpumem.admission.refusals", admission, (a) -> a.statistics().refusals())
			.tags("device", device)
			.description("Requests larger than the device or the budget, refused at once")
			.register(registry);
		FunctionCounter.builder("gpumem.admission.leaks", admission, (a) -> a.statistics().leaked())
			.tags("device", device)
			.description("Permits reclaimed after becoming unreachable without close")
			.register(registry);
	}

}
