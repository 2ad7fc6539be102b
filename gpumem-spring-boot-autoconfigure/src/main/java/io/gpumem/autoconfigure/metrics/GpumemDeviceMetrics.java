package io.gpumem.autoconfigure.metrics;

import java.util.function.ToDoubleFunction;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.BaseUnits;

import io.gpumem.allocator.MemoryBudget;
import io.gpumem.backend.GpuBackend;
import io.gpumem.device.GpuDevice;
import io.gpumem.device.GpumemDevices;
import io.gpumem.limit.DeviceLimit;
import io.gpumem.memory.MemoryInfo;

/**
 * The meters of every device, tagged with its ordinal: its memory used and free (by every process), its total,
 * the most of it this process may use and gpumem's budget of that, and whether it failed for good.
 */
public class GpumemDeviceMetrics extends DeviceMeterBinder {

	public GpumemDeviceMetrics(GpumemDevices devices) {
		super(devices);
	}

	@Override
	void bind(MeterRegistry registry, String device, GpuDevice gpu) {
		GpuBackend backend = gpu.backend();
		memory(registry, backend, device, "used", MemoryInfo::usedBytes);
		memory(registry, backend, device, "free", MemoryInfo::freeBytes);
		Gauge.builder("gpumem.device.memory.total", backend, (b) -> read(b, MemoryInfo::totalBytes))
			.tags("device", device)
			.baseUnit(BaseUnits.BYTES)
			.description("The device's memory in all")
			.register(registry);
		FunctionCounter.builder("gpumem.device.failures", backend, (b) -> b.health().isFailed() ? 1 : 0)
			.tags("device", device)
			.description("Faults that left the device unusable until the process restarts (at most one)")
			.register(registry);
		gpu.limit()
			.ifPresent((limit) -> Gauge.builder("gpumem.device.limit", limit, DeviceLimit::limitBytes)
				.tags("device", device, "source", limit.source())
				.baseUnit(BaseUnits.BYTES)
				.description("The most of the device this process may use: the smallest of the card and the limits "
						+ "GPU sharing sets (MPS, HAMi, the cgroup's dmem.max, a scheduler's share)")
				.register(registry));
		gpu.budget()
			.ifPresent((budget) -> Gauge.builder("gpumem.device.memory.budget", budget, MemoryBudget::limitBytes)
				.tags("device", device)
				.baseUnit(BaseUnits.BYTES)
				.description("The device memory gpumem's device and unified pools may hold together "
						+ "(gpumem.memory-fraction of the device's limit)")
				.register(registry));
	}

	/** A figure of the device's memory; NaN once it has failed, when its context answers nothing more. */
	private static double read(GpuBackend backend, ToDoubleFunction<MemoryInfo> value) {
		return backend.workingMemoryInfo().map(value::applyAsDouble).orElse(Double.NaN);
	}

	private static void memory(MeterRegistry registry, GpuBackend backend, String device, String state,
			ToDoubleFunction<MemoryInfo> value) {
		Gauge.builder("gpumem.device.memory", backend, (b) -> read(b, value))
			.tags("device", device, "state", state)
			.baseUnit(BaseUnits.BYTES)
			.description("The device's memory, used or free (by every process)")
			.register(registry);
	}

}
