package io.gpumem.autoconfigure.endpoint;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.util.unit.DataSize;

import io.gpumem.admission.AdmissionStatistics;
import io.gpumem.admission.GpuAdmission;
import io.gpumem.autoconfigure.GpumemPools;
import io.gpumem.backend.GpuBackend;
import io.gpumem.device.GpuDevice;
import io.gpumem.device.GpumemDevices;
import io.gpumem.limit.DeviceLimit;
import io.gpumem.memory.DeviceFailure;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.MemoryCache;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pool.PoolSnapshot;
import io.gpumem.pool.PoolStatistics;
import io.gpumem.pool.SizeClassStatistics;
import io.gpumem.pool.SleepMode;
import io.gpumem.pool.SleepStatus;
import io.gpumem.pool.advice.PoolAdvisor;
import io.gpumem.pool.diagnostics.PoolHistory;
import io.gpumem.pressure.PressureHandler.Memory;
import io.gpumem.pressure.PressureHandler;
import io.gpumem.pressure.PressureLevel;
import io.gpumem.pressure.PressureStatistics;

/**
 * {@code /actuator/gpumem}: the backend, the primary device and its pressure, every device gpumem manages,
 * and every pool's statistics (a device other than the primary names its pools {@code device1.device});
 * a pool's advice on its settings and its memory map; trims all pools or one, down to a number of cached bytes; puts a
 * pool to sleep and wakes it. Read-only
 * unless opened with {@code management.endpoint.gpumem.access=unrestricted}, since a trim costs every
 * request that follows a fresh allocation.
 */
@Endpoint(id = "gpumem", defaultAccess = Access.READ_ONLY)
public class GpumemEndpoint {

	private final GpumemDevices devices;

	private final GpumemPools pools;

	public GpumemEndpoint(GpumemDevices devices, GpumemPools pools) {
		this.devices = devices;
		this.pools = pools;
	}

	/**
	 * The backend, the primary device and its pressure (none without a pressure handler), every device with
	 * its pools' names, and one summary per pool.
	 */
	@ReadOperation
	public GpumemDescriptor gpumem() {
		Map<String, PoolSummary> summaries = new LinkedHashMap<>();
		this.pools.asMap().forEach((name, pool) -> summaries.put(name, PoolSummary.of(pool.statistics())));
		GpuDevice primary = this.devices.primary();
		GpuBackend backend = primary.backend();
		MemoryInfo memory = memory(primary);
		return new GpumemDescriptor(backend.name(),
				new DeviceDescriptor(backend.deviceId(), backend.deviceName(), total(memory), free(memory),
						limitBytes(primary), limitSource(primary), failure(primary)),
				primary.pressure().map(PressureDescriptor::of).orElse(null),
				primary.admission().map(GpuAdmission::statistics).orElse(null),
				this.devices.all().stream().map(this::summary).toList(), summaries);
	}

	private DeviceSummary summary(GpuDevice device) {
		MemoryInfo memory = memory(device);
		return new DeviceSummary(device.ordinal(), device.backend().deviceName(), total(memory), free(memory),
				limitBytes(device), limitSource(device), device.load(),
				device.pressure().map(PressureHandler::level).orElse(null),
				device.admission().map(GpuAdmission::statistics).orElse(null),
				device.pools().stream().map(MemoryCache::name).toList(), failure(device));
	}

	private static @Nullable MemoryInfo memory(GpuDevice device) {
		return device.backend().workingMemoryInfo().orElse(null);
	}

	private static long total(@Nullable MemoryInfo memory) {
		return (memory != null) ? memory.totalBytes() : -1;
	}

	private static long free(@Nullable MemoryInfo memory) {
		return (memory != null) ? memory.freeBytes() : -1;
	}

	private static long limitBytes(GpuDevice device) {
		return device.limit().map(DeviceLimit::limitBytes).orElse(-1L);
	}

	private static @Nullable String limitSource(GpuDevice device) {
		return device.limit().map(DeviceLimit::source).orElse(null);
	}

	private static @Nullable String failure(GpuDevice device) {
		return device.failure().map(DeviceFailure::describe).orElse(null);
	}

	/** One pool's summary with a row per size class; {@code null} (404) for an unknown pool. */
	@ReadOperation
	public @Nullable PoolDetail pool(@Selector String pool) {
		MemoryCache found = this.pools.get(pool);
		return (found != null) ? PoolDetail.of(found.statistics(),
				(found instanceof MemoryPool sleeps) ? sleeps.sleepStatus() : null) : null;
	}

	/**
	 * A detail of one pool: {@code GET /actuator/gpumem/{pool}/advice}, the settings the pool's recorded use
	 * says would have done better, each with the figure it predicts; {@code /snapshot}, every segment with its
	 * blocks ({@link PoolSnapshot}); {@code /history}, its recent events ({@link PoolHistory}). {@code null} (404)
	 * for an unknown pool, one without that detail (the reduction cache), or another path.
	 */
	@ReadOperation
	public @Nullable Object detail(@Selector String pool, @Selector String detail) {
		MemoryCache found = this.pools.get(pool);
		if (found == null) {
			return null;
		}
		return switch (detail) {
			case "advice" -> PoolAdvisor.advise(found).orElse(null);
			case "snapshot" -> found.snapshot().orElse(null);
			case "history" -> found.history().orElse(null);
			default -> null;
		};
	}

	/**
	 * Trims every pool down to {@code keepBytes} cached bytes (a whole number of bytes, or a size such as
	 * {@code 64MB} as in {@code application.yml}), to nothing cached when it is absent (a body of {@code {}} or none).
	 * @throws InvalidEndpointRequestException (400) for a negative or malformed {@code keepBytes}
	 */
	@WriteOperation
	public TrimResult trim(@Nullable String keepBytes) {
		long keep = keepBytes(keepBytes);
		Map<String, PoolTrim> trimmed = new LinkedHashMap<>();
		this.pools.asMap().forEach((name, pool) -> trimmed.put(name, trim(pool, keep)));
		return TrimResult.of(trimmed);
	}

	/**
	 * Trims one pool down to {@code keepBytes} cached bytes, read as by {@link #trim(String)}; {@code null} (404) for
	 * an unknown pool.
	 */
	@WriteOperation
	public @Nullable TrimResult trimPool(@Selector String pool, @Nullable String keepBytes) {
		long keep = keepBytes(keepBytes);
		MemoryCache found = this.pools.get(pool);
		return (found != null) ? TrimResult.of(Map.of(pool, trim(found, keep))) : null;
	}

	/**
	 * Puts a pool to sleep ({@code POST /actuator/gpumem/{pool}/sleep}, {@code mode} {@code offload}, the default, or
	 * {@code discard}) or wakes it ({@code /wake}): what it did; {@code null} (404) for an unknown pool or another
	 * action.
	 * @throws InvalidEndpointRequestException (400) for another mode, or a pool that cannot sleep (the reduction cache)
	 * @throws IllegalStateException where the pool lends buffers in fixed segments, whose addresses could not be kept
	 */
	@WriteOperation
	public @Nullable Object sleepOrWake(@Selector String pool, @Selector String action, @Nullable String mode) {
		MemoryCache found = this.pools.get(pool);
		if (found == null || !(action.equals("sleep") || action.equals("wake"))) {
			return null;
		}
		if (!(found instanceof MemoryPool sleeps)) {
			throw badRequest("pool '" + pool + "' cannot sleep: it is not a memory pool");
		}
		return action.equals("sleep") ? sleeps.sleep(sleepMode(mode)) : sleeps.wake();
	}

	private static SleepMode sleepMode(@Nullable String mode) {
		if (mode == null) {
			return SleepMode.OFFLOAD;
		}
		for (SleepMode known : SleepMode.values()) {
			if (known.name().equalsIgnoreCase(mode)) {
				return known;
			}
		}
		throw badRequest("mode must be offload or discard, not '" + mode + "'");
	}

	private static InvalidEndpointRequestException badRequest(String reason) {
		return new InvalidEndpointRequestException(reason, reason);
	}

	private static PoolTrim trim(MemoryCache pool, long keepBytes) {
		long released = pool.trim(keepBytes);
		return new PoolTrim(released, pool.cachedBytes());
	}

	private static long keepBytes(@Nullable String keepBytes) {
		if (keepBytes == null) {
			return 0;
		}
		long bytes;
		try {
			bytes = DataSize.parse(keepBytes).toBytes();
		}
		catch (IllegalArgumentException ex) {
			throw badRequest("keepBytes must be a whole number of bytes or a size such as 64MB, not '" + keepBytes
					+ "'");
		}
		if (bytes < 0) {
			throw badRequest("keepBytes must not be negative: " + keepBytes);
		}
		return bytes;
	}

	/**
	 * The answer to {@code GET /actuator/gpumem}: {@code device}, {@code pressure} and {@code admission} are the
	 * primary device's, {@code pressure} {@code null} without a pressure handler, {@code admission} without an
	 * admission.
	 */
	public record GpumemDescriptor(String backend, DeviceDescriptor device, @Nullable PressureDescriptor pressure,
			@Nullable AdmissionStatistics admission, List<DeviceSummary> devices, Map<String, PoolSummary> pools)
			implements OperationResponseBody {
	}

	/**
	 * A device the backend runs on: its memory, the most of it this process may use ({@code limitBytes}, -1 where the
	 * device was built without a limit) and where that limit comes from ({@code limitSource}, as in
	 * {@code CUDA_DEVICE_MEMORY_LIMIT_0 (HAMi)} or {@code the card}), and why it failed for good ({@code null} while it
	 * works; its memory figures are -1 then).
	 */
	public record DeviceDescriptor(int id, String name, long totalBytes, long freeBytes, long limitBytes,
			@Nullable String limitSource, @Nullable String failure) {
	}

	/**
	 * A device gpumem manages: its figures and its limit as {@link DeviceDescriptor} gives them, its load (the share
	 * of its budget its pools lend, 1 once failed), its pressure level ({@code null} without a pressure handler), its
	 * admission's figures ({@code null} without one), the names of its pools, and why it failed for good
	 * ({@code null} while it works).
	 */
	public record DeviceSummary(int id, String name, long totalBytes, long freeBytes, long limitBytes,
			@Nullable String limitSource, double load, @Nullable PressureLevel pressure,
			@Nullable AdmissionStatistics admission, List<String> pools, @Nullable String failure) {
	}

	/**
	 * The pressure handler's levels, as its last check or refusal left them (the device's is the
	 * {@code gpumem.pressure.level} gauge and the health indicator's), and what its reactions and the
	 * out-of-memory chain did.
	 */
	public record PressureDescriptor(PressureLevel level, double utilization, PressureLevel pinnedLevel,
			double pinnedUtilization, long checks, long shrinks, long shrunkBytes, OutOfMemoryChain outOfMemory) {

		static PressureDescriptor of(PressureHandler handler) {
			PressureStatistics s = handler.statistics();
			return new PressureDescriptor(s.level(), s.utilization(), handler.level(Memory.PINNED),
					handler.utilization(Memory.PINNED), s.checks(), s.shrinks(), s.shrunkBytes(),
					new OutOfMemoryChain(s.outOfMemoryRefusals(), s.outOfMemoryFreedBytes(), s.outOfMemoryFailures()));
		}

	}

	/** Refusals the chain was asked to make room for, the bytes it freed, and the allocations that failed anyway. */
	public record OutOfMemoryChain(long refusals, long freedBytes, long failures) {
	}

	/** One pool's figures. */
	public record PoolSummary(MemoryKind kind, long inUseBytes, long inUseBuffers, long cachedBytes,
			long cachedBuffers, long reservedBytes, long peakReservedBytes, long requests, long hits,
			long misses, double hitRate, long returns, long trimmedBytes, long allocationFailures, long leakedBuffers) {

		static PoolSummary of(PoolStatistics s) {
			return new PoolSummary(s.kind(), s.inUseBytes(), s.inUseBuffers(), s.cachedBytes(), s.cachedBuffers(),
					s.reservedBytes(), s.peakReservedBytes(), s.requests(), s.hits(), s.misses(),
					s.hitRate(), s.returns(), s.trimmedBytes(), s.allocationFailures(), s.leakedBuffers());
		}

	}

	/**
	 * One pool's figures, a row per size class, the requests above the top class, the segments the classes' blocks
	 * are cut from, and whether it sleeps with what its last sleep and wake did ({@code null} for the reduction
	 * cache): the answer to {@code GET /actuator/gpumem/{pool}}.
	 */
	public record PoolDetail(String name, MemoryKind kind, long inUseBytes, long inUseBuffers, long cachedBytes,
			long cachedBuffers, long reservedBytes, long peakReservedBytes, long requests, long hits, long misses,
			double hitRate, long returns, long trimmedBytes, long allocationFailures, long leakedBuffers,
			PoolStatistics.Waits memoryWaits, List<SizeClassStatistics> sizeClasses,
			PoolStatistics.AboveTopClass aboveTopClass, SegmentsDescriptor segments, @Nullable SleepStatus sleep)
			implements OperationResponseBody {

		static PoolDetail of(PoolStatistics s, @Nullable SleepStatus sleep) {
			return new PoolDetail(s.name(), s.kind(), s.inUseBytes(), s.inUseBuffers(), s.cachedBytes(),
					s.cachedBuffers(), s.reservedBytes(), s.peakReservedBytes(), s.requests(), s.hits(), s.misses(),
					s.hitRate(), s.returns(), s.trimmedBytes(), s.allocationFailures(), s.leakedBuffers(),
					s.memoryWaits(), s.sizeClasses(), s.aboveTopClass(), SegmentsDescriptor.of(s.segments()), sleep);
		}

	}

	/**
	 * A pool's segments: how many, their bytes, the bytes free in them, the largest free block, and the
	 * fragmentation of the free bytes (1 − largest free block / free bytes).
	 */
	public record SegmentsDescriptor(long segments, long segmentBytes, long freeBytes, long largestFreeBlock,
			double fragmentation) {

		static SegmentsDescriptor of(PoolStatistics.Segments s) {
			return new SegmentsDescriptor(s.segments(), s.segmentBytes(), s.freeBytes(), s.largestFreeBlock(),
					s.fragmentation());
		}

	}

	/** What a trim released, in all and per pool. */
	public record TrimResult(long releasedBytes, Map<String, PoolTrim> pools) implements OperationResponseBody {

		static TrimResult of(Map<String, PoolTrim> pools) {
			return new TrimResult(pools.values().stream().mapToLong(PoolTrim::releasedBytes).sum(), pools);
		}

	}

	/** What a trim released from one pool, and what that pool still caches. */
	public record PoolTrim(long releasedBytes, long cachedBytes) {
	}

}
