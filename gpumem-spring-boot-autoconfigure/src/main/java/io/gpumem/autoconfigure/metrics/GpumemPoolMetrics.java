package io.gpumem.autoconfigure.metrics;

import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.binder.MeterBinder;

import io.gpumem.autoconfigure.GpumemPools;
import io.gpumem.pool.MemoryCache;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pool.PoolStatistics;
import io.gpumem.pool.SleepStatus;

/**
 * The meters of every pool, read from its statistics and tagged with its name and its device: memory and
 * buffers used and cached, the cap on cached bytes, the segments, requests by hit or miss, the time misses spend
 * in the allocator, bytes trimmed, allocation failures, leaked buffers, waits for memory, and sleeps.
 */
public class GpumemPoolMetrics implements MeterBinder {

	private final GpumemPools pools;

	public GpumemPoolMetrics(GpumemPools pools) {
		this.pools = pools;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		this.pools.asMap()
			.forEach((name, pool) -> bind(registry, pool,
					Tags.of("pool", name, "device", String.valueOf(this.pools.device(name)))));
	}

	private static void bind(MeterRegistry registry, MemoryCache pool, Tags tags) {
		String memory = "Bytes of the pool's buffers, lent out (used) or cached ready to lend";
		gauge(registry, "gpumem.pool.memory", tags.and("state", "used"), BaseUnits.BYTES, memory, pool,
				PoolStatistics::inUseBytes);
		gauge(registry, "gpumem.pool.memory", tags.and("state", "cached"), BaseUnits.BYTES, memory, pool,
				PoolStatistics::cachedBytes);
		String buffers = "The pool's buffers, lent out (used) or cached ready to lend";
		gauge(registry, "gpumem.pool.buffers", tags.and("state", "used"), BaseUnits.BUFFERS, buffers, pool,
				PoolStatistics::inUseBuffers);
		gauge(registry, "gpumem.pool.buffers", tags.and("state", "cached"), BaseUnits.BUFFERS, buffers, pool,
				PoolStatistics::cachedBuffers);
		if (pool.statistics().maxCachedBytes() != Long.MAX_VALUE) {
			gauge(registry, "gpumem.pool.memory.max", tags, BaseUnits.BYTES,
					"The most bytes the pool keeps cached (max-cached)", pool, PoolStatistics::maxCachedBytes);
		}
		String segments = "Bytes of the segments the pool cuts its blocks from, in all (reserved) or free in them";
		gauge(registry, "gpumem.pool.segments.memory", tags.and("state", "reserved"), BaseUnits.BYTES, segments, pool,
				(s) -> s.segments().segmentBytes());
		gauge(registry, "gpumem.pool.segments.memory", tags.and("state", "free"), BaseUnits.BYTES, segments, pool,
				(s) -> s.segments().freeBytes());
		gauge(registry, "gpumem.pool.segments", tags, null,
				"Segments the pool holds from its allocator, each given back only whole", pool,
				(s) -> s.segments().segments());
		gauge(registry, "gpumem.pool.segments.largest.free", tags, BaseUnits.BYTES,
				"The largest run of free bytes in one segment: the largest request served without allocating", pool,
				(s) -> s.segments().largestFreeBlock());
		gauge(registry, "gpumem.pool.fragmentation", tags, null,
				"1 - largest free block / free bytes in the segments: 0 when the free bytes lie in one run", pool,
				(s) -> s.segments().fragmentation());
		String requests = "Buffer requests, by result: hit (served from the cache) or miss (went to the allocator)";
		counter(registry, "gpumem.pool.requests", tags.and("result", "hit"), null, requests, pool,
				PoolStatistics::hits);
		counter(registry, "gpumem.pool.requests", tags.and("result", "miss"), null, requests, pool,
				PoolStatistics::misses);
		timer(registry, "gpumem.pool.miss", tags,
				"Time misses spent getting memory from the allocator, retries and waits included", pool,
				PoolStatistics::misses, PoolStatistics::missNanos);
		counter(registry, "gpumem.pool.leaks", tags, BaseUnits.BUFFERS,
				"Buffers found unreachable while still lent out, reclaimed by leak detection", pool,
				PoolStatistics::leakedBuffers);
		counter(registry, "gpumem.pool.trimmed", tags, BaseUnits.BYTES, "Cached bytes given back to the allocator",
				pool, PoolStatistics::trimmedBytes);
		counter(registry, "gpumem.allocation.failures", tags, null,
				"Acquires that failed for want of memory after the pool's retries, or with the allocator's error", pool,
				PoolStatistics::allocationFailures);
		timer(registry, "gpumem.pool.memory.wait", tags, "Acquires that waited for memory to be returned, served or not",
				pool, (s) -> s.memoryWaits().waits(), (s) -> s.memoryWaits().waitNanos());
		counter(registry, "gpumem.pool.memory.wait.timeouts", tags, null,
				"Waits for memory that ran out, each then failing as out of memory", pool,
				(s) -> s.memoryWaits().timeouts());
		counter(registry, "gpumem.pool.memory.wait.gave.way", tags, null,
				"Waiting acquires told to give way and retry, where every thread holding memory of the pool waited", pool,
				(s) -> s.memoryWaits().gaveWay());
		if (pool instanceof MemoryPool sleeping) {
			bindSleep(registry, sleeping, tags);
		}
	}

	private static void bindSleep(MeterRegistry registry, MemoryPool pool, Tags tags) {
		Gauge.builder("gpumem.pool.asleep", pool, (p) -> (p.sleepStatus().state() == SleepStatus.State.ASLEEP) ? 1 : 0)
			.tags(tags)
			.description("1 while the pool sleeps, the memory behind its lent buffers given back; else 0")
			.register(registry);
		String changes = "Times the pool fell asleep (sleep) or woke (wake)";
		FunctionCounter.builder("gpumem.pool.sleep.changes", pool, (p) -> p.sleepStatus().sleeps())
			.tags(tags.and("change", "sleep"))
			.description(changes)
			.register(registry);
		FunctionCounter.builder("gpumem.pool.sleep.changes", pool, (p) -> p.sleepStatus().wakes())
			.tags(tags.and("change", "wake"))
			.description(changes)
			.register(registry);
		Gauge.builder("gpumem.pool.sleep.offloaded", pool, (p) -> p.sleepStatus().offloadedBytes())
			.tags(tags)
			.baseUnit(BaseUnits.BYTES)
			.description("Bytes of lent buffers held in host memory while the pool sleeps")
			.register(registry);
	}

	private static void gauge(MeterRegistry registry, String name, Tags tags, String unit, String description,
			MemoryCache pool, ToDoubleFunction<PoolStatistics> figure) {
		Gauge.builder(name, pool, (p) -> figure.applyAsDouble(p.statistics()))
			.tags(tags)
			.baseUnit(unit)
			.description(description)
			.register(registry);
	}

	private static void timer(MeterRegistry registry, String name, Tags tags, String description, MemoryCache pool,
			ToLongFunction<PoolStatistics> count, ToDoubleFunction<PoolStatistics> nanos) {
		FunctionTimer.builder(name, pool, (p) -> count.applyAsLong(p.statistics()),
				(p) -> nanos.applyAsDouble(p.statistics()), TimeUnit.NANOSECONDS)
			.tags(tags)
			.description(description)
			.register(registry);
	}

	private static void counter(MeterRegistry registry, String name, Tags tags, String unit, String description,
			MemoryCache pool, ToDoubleFunction<PoolStatistics> figure) {
		FunctionCounter.builder(name, pool, (p) -> figure.applyAsDouble(p.statistics()))
			.tags(tags)
			.baseUnit(unit)
			.description(description)
			.register(registry);
	}

}
