package io.gpumem.autoconfigure.metrics;

import java.util.Locale;
import java.util.function.ToDoubleFunction;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.BaseUnits;

import io.gpumem.device.GpuDevice;
import io.gpumem.device.GpumemDevices;
import io.gpumem.pressure.PressureHandler;
import io.gpumem.pressure.PressureHandler.Memory;
import io.gpumem.pressure.PressureStatistics;

/**
 * Every device's memory pressure: the level of device and pinned memory (its ordinal, NORMAL = 0), the shrinks,
 * and the out-of-memory chain's refusals, freed bytes and failures.
 */
public class GpumemPressureMetrics extends DeviceMeterBinder {

	public GpumemPressureMetrics(GpumemDevices devices) {
		super(devices);
	}

	@Override
	void bind(MeterRegistry registry, String device, GpuDevice gpu) {
		gpu.pressure().ifPresent((pressure) -> bind(registry, device, pressure));
	}

	private static void bind(MeterRegistry registry, String device, PressureHandler pressure) {
		for (Memory memory : Memory.values()) {
			Gauge.builder("gpumem.pressure.level", pressure, (handler) -> handler.level(memory).ordinal())
				.tags("device", device, "memory", memory.name().toLowerCase(Locale.ROOT))
				.description("Memory pressure: 0 normal, 1 elevated, 2 warning, 3 critical, 4 out of memory")
				.register(registry);
		}
		counter(registry, "gpumem.pressure.shrinks", device, null, "Shrink reactions that trimmed cached memory",
				pressure, PressureStatistics::shrinks);
		counter(registry, "gpumem.pressure.oom.refusals", device, null,
				"Allocations refused for want of memory that the out-of-memory chain made room for", pressure,
				PressureStatistics::outOfMemoryRefusals);
		counter(registry, "gpumem.pressure.oom.freed", device, BaseUnits.BYTES,
				"Cached bytes the out-of-memory chain freed", pressure, PressureStatistics::outOfMemoryFreedBytes);
		counter(registry, "gpumem.pressure.oom.failures", device, null,
				"Allocations that failed after every step of the out-of-memory chain", pressure,
				PressureStatistics::outOfMemoryFailures);
	}

	private static void counter(MeterRegistry registry, String name, String device, String unit, String description,
			PressureHandler pressure, ToDoubleFunction<PressureStatistics> figure) {
		FunctionCounter.builder(name, pressure, (handler) -> figure.applyAsDouble(handler.statistics()))
			.tags("device", device)
			.baseUnit(unit)
			.description(description)
			.register(registry);
	}

}
