package io.gpumem.autoconfigure.metrics;

import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.binder.MeterBinder;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.allocator.MemoryBudget;
import io.gpumem.autoconfigure.GpumemPools;
import io.gpumem.backend.GpuBackend;
import io.gpumem.device.GpuDevice;
import io.gpumem.device.GpumemDevices;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pressure.PressureHandler;
import io.gpumem.pressure.PressureHandler.Memory;
import io.gpumem.transfer.TransferStatistics;
import io.gpumem.transfer.Transfers;

/**
 * gpumem's meters, each with a description and a base unit where it has one: per pool, memory and buffers
 * used and cached, the cap on cached bytes, requests by hit or miss, the time misses spend in the allocator,
 * bytes trimmed, allocation failures, leaked buffers and waits for memory; the device's memory, its total and
 * gpumem's budget of it; transfers' bytes (their durations are the {@code gpumem.transfer} observation's);
 * admission of GPU work (active, waiting, the limit, waits and rejections); the pressure level of device and
 * pinned memory (its ordinal, NORMAL = 0), the shrinks, and the out-of-memory chain's refusals, freed bytes
 * and failures. Every meter carries the {@code device} tag, the ordinal of the device it measures.
 */
public class GpumemMeterBinder implements MeterBinder {

	private final GpumemDevices devices;

	private final GpumemPools pools;

	/** The meters of every device, tagged with its ordinal, and of {@code pools}, tagged with their device's. */
	public GpumemMeterBinder(GpumemDevices devices, GpumemPools pools) {
		this.devices = devices;
		this.pools = pools;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		String primary = String.valueOf(this.devices.primary().ordinal());
		this.pools.asMap().forEach((name, pool) -> {
			int device = this.pools.device(name);
			bindPool(registry, name, (device >= 0) ? String.valueOf(device) : primary, pool);
		});
		this.devices.all().forEach((device) -> bindDevice(registry, device));
	}

	private static void bindDevice(MeterRegistry registry, GpuDevice gpu) {
		String device = String.valueOf(gpu.ordinal());
		GpuBackend backend = gpu.backend();
		deviceMemory(registry, backend, device, "used", MemoryInfo::usedBytes);
		deviceMemory(registry, backend, device, "free", MemoryInfo::freeBytes);
		Gauge.builder("gpumem.device.memory.total", backend, (b) -> b.memoryInfo().totalBytes())
			.tags("device", device)
			.baseUnit(BaseUnits.BYTES)
			.description("The device's memory in all")
			.register(registry);
		gpu.budget()
			.ifPresent((budget) -> Gauge.builder("gpumem.device.memory.budget", budget, MemoryBudget::limitBytes)
				.tags("device", device)
				.baseUnit(BaseUnits.BYTES)
				.description("The device memory gpumem's device and unified pools may hold together "
						+ "(gpumem.memory-fraction of the total)")
				.register(registry));
		gpu.transfers().ifPresent((transfers) -> bindTransfers(registry, device, transfers));
		gpu.pressure().ifPresent((pressure) -> bindPressure(registry, device, pressure));
		gpu.admission().ifPresent((admission) -> bindAdmission(registry, device, admission));
	}

	private static void bindTransfers(MeterRegistry registry, String device, Transfers transfers) {
		transferMeters(registry, device, "upload", transfers, TransferStatistics::uploads);
		transferMeters(registry, device, "download", transfers, TransferStatistics::downloads);
	}

	private static void transferMeters(MeterRegistry registry, String device, String direction, Transfers transfers,
			Function<TransferStatistics, TransferStatistics.Direction> side) {
		FunctionCounter.builder("gpumem.transfer.bytes", transfers, (t) -> side.apply(t.statistics()).bytes())
			.tags("device", device, "direction", direction)
			.baseUnit(BaseUnits.BYTES)
			.description("Bytes moved between Java arrays and device buffers through pinned staging")
			.register(registry);
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

	private static void bindPressure(MeterRegistry registry, String device, PressureHandler pressure) {
		for (Memory memory : Memory.values()) {
			Gauge.builder("gpumem.pressure.level", pressure, (handler) -> handler.level(memory).ordinal())
				.tags("device", device, "memory", memory.name().toLowerCase(Locale.ROOT))
				.description("Memory pressure: 0 normal, 1 elevated, 2 warning, 3 critical, 4 out of memory")
				.register(registry);
		}
		FunctionCounter.builder("gpumem.pressure.shrinks", pressure, (handler) -> handler.statistics().shrinks())
			.tags("device", device)
			.description("Shrink reactions that trimmed cached memory")
			.register(registry);
		FunctionCounter
			.builder("gpumem.pressure.oom.refusals", pressure,
					(handler) -> handler.statistics().outOfMemoryRefusals())
			.tags("device", device)
			.description("Allocations refused for want of memory that the out-of-memory chain made room for")
			.register(registry);
		FunctionCounter
			.builder("gpumem.pressure.oom.freed", pressure, (handler) -> handler.statistics().outOfMemoryFreedBytes())
			.baseUnit(BaseUnits.BYTES)
			.tags("device", device)
			.description("Cached bytes the out-of-memory chain freed")
			.register(registry);
		FunctionCounter
			.builder("gpumem.pressure.oom.failures", pressure,
					(handler) -> handler.statistics().outOfMemoryFailures())
			.tags("device", device)
			.description("Allocations that failed after every step of the out-of-memory chain")
			.register(registry);
	}

	private static void bindPool(MeterRegistry registry, String name, String device, MemoryPool pool) {
		String memory = "Bytes of the pool's buffers, lent out (used) or cached ready to lend";
		poolGauge(registry, "gpumem.pool.memory", name, device, "used", BaseUnits.BYTES, memory, pool, MemoryPool::usedBytes);
		poolGauge(registry, "gpumem.pool.memory", name, device, "cached", BaseUnits.BYTES, memory, pool,
				MemoryPool::cachedBytes);
		String buffers = "The pool's buffers, lent out (used) or cached ready to lend";
		poolGauge(registry, "gpumem.pool.buffers", name, device, "used", BaseUnits.BUFFERS, buffers, pool,
				MemoryPool::usedBuffers);
		poolGauge(registry, "gpumem.pool.buffers", name, device, "cached", BaseUnits.BUFFERS, buffers, pool,
				MemoryPool::cachedBuffers);
		if (pool.maxCachedBytes() != Long.MAX_VALUE) {
			Gauge.builder("gpumem.pool.memory.max", pool, MemoryPool::maxCachedBytes)
				.tags("pool", name, "device", device)
				.baseUnit(BaseUnits.BYTES)
				.description("The most bytes the pool keeps cached (max-cached)")
				.register(registry);
		}
		String segments = "Bytes of the segments the pool cuts its blocks from, in all (reserved) or free in them";
		poolGauge(registry, "gpumem.pool.segments.memory", name, device, "reserved", BaseUnits.BYTES, segments, pool,
				(p) -> p.segments().segmentBytes());
		poolGauge(registry, "gpumem.pool.segments.memory", name, device, "free", BaseUnits.BYTES, segments, pool,
				(p) -> p.segments().freeBytes());
		Gauge.builder("gpumem.pool.segments", pool, (p) -> p.segments().segments())
			.tags("pool", name, "device", device)
			.description("Segments the pool holds from its allocator, each given back only whole")
			.register(registry);
		Gauge.builder("gpumem.pool.segments.largest.free", pool, (p) -> p.segments().largestFreeBlock())
			.tags("pool", name, "device", device)
			.baseUnit(BaseUnits.BYTES)
			.description("The largest run of free bytes in one segment: the largest request served without allocating")
			.register(registry);
		Gauge.builder("gpumem.pool.fragmentation", pool, (p) -> p.segments().fragmentation())
			.tags("pool", name, "device", device)
			.description("1 - largest free block / free bytes in the segments: 0 when the free bytes lie in one run")
			.register(registry);
		String requests = "Buffer requests, by result: hit (served from the cache) or miss (went to the allocator)";
		FunctionCounter.builder("gpumem.pool.requests", pool, MemoryPool::hits)
			.tags("pool", name, "device", device, "result", "hit")
			.description(requests)
			.register(registry);
		FunctionCounter.builder("gpumem.pool.requests", pool, MemoryPool::misses)
			.tags("pool", name, "device", device, "result", "miss")
			.description(requests)
			.register(registry);
		FunctionTimer.builder("gpumem.pool.miss", pool, MemoryPool::misses, MemoryPool::missNanos,
				TimeUnit.NANOSECONDS)
			.tags("pool", name, "device", device)
			.description("Time misses spent getting memory from the allocator, retries and waits included")
			.register(registry);
		FunctionCounter.builder("gpumem.pool.leaks", pool, MemoryPool::leakedBuffers)
			.tags("pool", name, "device", device)
			.baseUnit(BaseUnits.BUFFERS)
			.description("Buffers found unreachable while still lent out, reclaimed by leak detection")
			.register(registry);
		FunctionCounter.builder("gpumem.pool.trimmed", pool, MemoryPool::trimmedBytes)
			.tags("pool", name, "device", device)
			.baseUnit(BaseUnits.BYTES)
			.description("Cached bytes given back to the allocator")
			.register(registry);
		FunctionCounter.builder("gpumem.allocation.failures", pool, MemoryPool::allocationFailures)
			.tags("pool", name, "device", device)
			.description("Requests that failed for want of memory after the pool's retries")
			.register(registry);
		FunctionTimer.builder("gpumem.pool.memory.wait", pool, (p) -> p.memoryWaits().waits(),
				(p) -> p.memoryWaits().waitNanos(), TimeUnit.NANOSECONDS)
			.tags("pool", name, "device", device)
			.description("Acquires that waited for memory to be returned, served or not")
			.register(registry);
		FunctionCounter.builder("gpumem.pool.memory.wait.timeouts", pool,
				(p) -> p.memoryWaits().timeouts())
			.tags("pool", name, "device", device)
			.description("Waits for memory that ran out, each then failing as out of memory")
			.register(registry);
	}

	private static void poolGauge(MeterRegistry registry, String meter, String pool, String device, String state,
			String unit, String description, MemoryPool source, ToDoubleFunction<MemoryPool> value) {
		Gauge.builder(meter, source, value)
			.tags("pool", pool, "device", device, "state", state)
			.baseUnit(unit)
			.description(description)
			.register(registry);
	}

	private static void deviceMemory(MeterRegistry registry, GpuBackend backend, String device, String state,
			ToDoubleFunction<MemoryInfo> value) {
		Gauge.builder("gpumem.device.memory", backend, (b) -> value.applyAsDouble(b.memoryInfo()))
			.tags("device", device, "state", state)
			.baseUnit(BaseUnits.BYTES)
			.description("The device's memory, used or free (by every process)")
			.register(registry);
	}

}
