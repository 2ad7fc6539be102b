package io.gpumem.autoconfigure.metrics;

import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.binder.MeterBinder;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.autoconfigure.GpumemPools;
import io.gpumem.backend.GpuBackend;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pressure.PressureHandler;
import io.gpumem.pressure.PressureHandler.Memory;

/**
 * gpumem's meters: per pool, memory and buffers used and cached, requests by hit or miss, bytes
 * trimmed, allocation failures and waits for memory; the device's memory; admission of GPU work (active,
 * waiting, the limit, waits and rejections); the pressure level of device and pinned memory (its ordinal,
 * NORMAL = 0), the shrinks, and the out-of-memory chain's refusals, freed bytes and failures.
 */
public class GpumemMeterBinder implements MeterBinder {

	private final GpuBackend backend;

	private final GpumemPools pools;

	private final PressureHandler pressure;

	private final GpuAdmission admission;

	/**
	 * @param pressure the pressure handler, or {@code null} when there is none
	 * @param admission the admission of GPU work, or {@code null} when there is none
	 */
	public GpumemMeterBinder(GpuBackend backend, GpumemPools pools, PressureHandler pressure, GpuAdmission admission) {
		this.backend = backend;
		this.pools = pools;
		this.pressure = pressure;
		this.admission = admission;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		this.pools.asMap().forEach((name, pool) -> bindPool(registry, name, pool));
		String device = String.valueOf(this.backend.deviceId());
		deviceMemory(registry, device, "used", MemoryInfo::usedBytes);
		deviceMemory(registry, device, "free", MemoryInfo::freeBytes);
		deviceMemory(registry, device, "total", MemoryInfo::totalBytes);
		if (this.pressure != null) {
			bindPressure(registry, this.pressure);
		}
		if (this.admission != null) {
			bindAdmission(registry, device, this.admission);
		}
	}

	private static void bindAdmission(MeterRegistry registry, String device, GpuAdmission admission) {
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
			.description("GPU work turned away after waiting for a permit")
			.register(registry);
	}

	private static void bindPressure(MeterRegistry registry, PressureHandler pressure) {
		for (Memory memory : Memory.values()) {
			Gauge.builder("gpumem.pressure.level", pressure, (handler) -> handler.level(memory).ordinal())
				.tags("memory", memory.name().toLowerCase(Locale.ROOT))
				.description("Memory pressure: 0 normal, 1 elevated, 2 warning, 3 critical, 4 out of memory")
				.register(registry);
		}
		FunctionCounter.builder("gpumem.pressure.shrinks", pressure, (handler) -> handler.statistics().shrinks())
			.description("Shrink reactions that trimmed cached memory")
			.register(registry);
		FunctionCounter
			.builder("gpumem.pressure.oom.refusals", pressure,
					(handler) -> handler.statistics().outOfMemoryRefusals())
			.description("Allocations refused for want of memory that the out-of-memory chain made room for")
			.register(registry);
		FunctionCounter
			.builder("gpumem.pressure.oom.freed", pressure, (handler) -> handler.statistics().outOfMemoryFreedBytes())
			.baseUnit(BaseUnits.BYTES)
			.description("Cached bytes the out-of-memory chain freed")
			.register(registry);
		FunctionCounter
			.builder("gpumem.pressure.oom.failures", pressure,
					(handler) -> handler.statistics().outOfMemoryFailures())
			.description("Allocations that failed after every step of the out-of-memory chain")
			.register(registry);
	}

	private void bindPool(MeterRegistry registry, String name, MemoryPool pool) {
		poolGauge(registry, "gpumem.pool.memory", name, "used", BaseUnits.BYTES, pool, MemoryPool::usedBytes);
		poolGauge(registry, "gpumem.pool.memory", name, "cached", BaseUnits.BYTES, pool, MemoryPool::cachedBytes);
		poolGauge(registry, "gpumem.pool.buffers", name, "used", BaseUnits.BUFFERS, pool, MemoryPool::usedBuffers);
		poolGauge(registry, "gpumem.pool.buffers", name, "cached", BaseUnits.BUFFERS, pool,
				MemoryPool::cachedBuffers);
		FunctionCounter.builder("gpumem.pool.requests", pool, MemoryPool::hits)
			.tags("pool", name, "result", "hit")
			.description("Buffer requests served from the pool's cache")
			.register(registry);
		FunctionCounter.builder("gpumem.pool.requests", pool, MemoryPool::misses)
			.tags("pool", name, "result", "miss")
			.description("Buffer requests that went to the allocator")
			.register(registry);
		FunctionCounter.builder("gpumem.pool.trimmed", pool, MemoryPool::trimmedBytes)
			.tags("pool", name)
			.baseUnit(BaseUnits.BYTES)
			.description("Cached bytes given back to the allocator")
			.register(registry);
		FunctionCounter.builder("gpumem.allocation.failures", pool, MemoryPool::allocationFailures)
			.tags("pool", name)
			.description("Requests that failed for want of memory after the pool's retries")
			.register(registry);
		FunctionTimer.builder("gpumem.pool.memory.wait", pool, (p) -> p.memoryWaits().waits(),
				(p) -> p.memoryWaits().waitNanos(), TimeUnit.NANOSECONDS)
			.tags("pool", name)
			.description("Acquires that waited for memory to be returned, served or not")
			.register(registry);
		FunctionCounter.builder("gpumem.pool.memory.wait.timeouts", pool,
				(p) -> p.memoryWaits().timeouts())
			.tags("pool", name)
			.description("Waits for memory that ran out, each then failing as out of memory")
			.register(registry);
	}

	private static void poolGauge(MeterRegistry registry, String meter, String pool, String state, String unit,
			MemoryPool source, ToDoubleFunction<MemoryPool> value) {
		Gauge.builder(meter, source, value).tags("pool", pool, "state", state).baseUnit(unit).register(registry);
	}

	private void deviceMemory(MeterRegistry registry, String device, String state, ToDoubleFunction<MemoryInfo> value) {
		Gauge.builder("gpumem.device.memory", this.backend, (backend) -> value.applyAsDouble(backend.memoryInfo()))
			.tags("device", device, "state", state)
			.baseUnit(BaseUnits.BYTES)
			.description("The device's memory")
			.register(registry);
	}

}
