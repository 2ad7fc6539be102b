package io.gpumem.autoconfigure;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.core.env.Environment;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.allocator.LimitingAllocator;
import io.gpumem.allocator.MemoryBudget;
import io.gpumem.backend.GpuBackend;
import io.gpumem.device.GpuDevice;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PoolPreset;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.pressure.PressureHandler;
import io.gpumem.pressure.PressureLevel;
import io.gpumem.pressure.PressureListener;
import io.gpumem.pressure.PressureReaction;
import io.gpumem.pressure.PressureThresholds;
import io.gpumem.reduction.ReductionBufferCache;
import io.gpumem.transfer.Transfers;

/**
 * Builds one device's parts from the properties: the auto-configuration's beans for the primary device,
 * and every part of each other device, named after it ({@code device1.device}, {@code device1.pinned}).
 */
final class DeviceParts {

	private final GpumemProperties properties;

	private final List<GpumemPoolCustomizer> customizers;

	private final Environment environment;

	DeviceParts(GpumemProperties properties, List<GpumemPoolCustomizer> customizers, Environment environment) {
		this.properties = properties;
		this.customizers = customizers;
		this.environment = environment;
	}

	/** A part's name on a device other than the primary: {@code device1.pinned}. */
	static String secondaryName(int ordinal, String part) {
		return "device" + ordinal + "." + part;
	}

	/** The share of the device gpumem may hold ({@code gpumem.memory-fraction}). */
	MemoryBudget budget(GpuBackend backend) {
		long total = backend.allocator(MemoryKind.DEVICE).memoryInfo().totalBytes();
		return InvalidProperties.under("gpumem",
				() -> MemoryBudget.ofFraction(total, this.properties.getMemoryFraction()));
	}

	StratifiedMemoryPool devicePool(String name, GpuBackend backend, MemoryBudget budget) {
		GpumemProperties.DevicePool pool = this.properties.getDevicePool();
		MemoryAllocator allocator = switch (pool.getAllocator()) {
			case ARENA -> backend.allocator(MemoryKind.DEVICE);
			case CUDA_ASYNC -> streamOrderedAllocator(backend);
		};
		return pool(name, "device", "gpumem.device-pool", new LimitingAllocator(allocator, budget), pool,
				pool.getPreset());
	}

	private static MemoryAllocator streamOrderedAllocator(GpuBackend backend) {
		try {
			return backend.streamOrderedAllocator();
		}
		catch (RuntimeException ex) {
			throw new InvalidConfigurationPropertyValueException("gpumem.device-pool.allocator", "cuda-async",
					"the stream-ordered pool of " + backend.describe() + " could not be created: " + ex.getMessage());
		}
	}

	StratifiedMemoryPool pinnedPool(String name, GpuBackend backend) {
		return pool(name, "pinned", "gpumem.pinned-pool", backend.allocator(MemoryKind.PINNED),
				this.properties.getPinnedPool(), PoolPreset.DEFAULT);
	}

	StratifiedMemoryPool unifiedPool(String name, GpuBackend backend, MemoryBudget budget) {
		return pool(name, "unified", "gpumem.unified-pool",
				new LimitingAllocator(backend.allocator(MemoryKind.UNIFIED), budget), this.properties.getUnifiedPool(),
				PoolPreset.DEFAULT);
	}

	ReductionBufferCache reductionCache(String name, StratifiedMemoryPool devicePool,
			StratifiedMemoryPool pinnedPool) {
		return InvalidProperties.under("gpumem.reduction-cache", () -> new ReductionBufferCache(name,
				devicePool.allocator(), pinnedPool, this.properties.getReductionCache().getMaxBuffersPerKey()));
	}

	/** Admission of GPU work to the device ({@code gpumem.admission.*}): no limit unless one is set. */
	GpuAdmission admission(GpuBackend backend) {
		GpumemProperties.Admission admission = this.properties.getAdmission();
		String device = backend.name() + " device " + backend.deviceId();
		return InvalidProperties.under("gpumem.admission",
				() -> new GpuAdmission(device, admission.getMaxConcurrent(), admission.getMaxWait()));
	}

	PressureThresholds thresholds() {
		GpumemProperties.Thresholds thresholds = this.properties.getPressure().getThresholds();
		return InvalidProperties.under("gpumem.pressure.thresholds", () -> new PressureThresholds(
				thresholds.getElevated(), thresholds.getWarning(), thresholds.getCritical()));
	}

	/**
	 * The device's pressure handler, watching its memory and shrinking its {@code pools}, checking on a
	 * schedule and publishing level changes as application events.
	 */
	PressureHandler pressureHandler(GpuBackend backend, List<? extends MemoryPool> pools,
			PressureThresholds thresholds, ApplicationEventPublisher events, List<PressureListener> callbacks) {
		GpumemProperties.Pressure pressure = this.properties.getPressure();
		GpumemProperties.Reactions reactions = pressure.getReactions();
		PressureHandler handler = InvalidProperties.under("gpumem.pressure",
				() -> PressureHandler.builder(backend::memoryInfo)
					.pinnedMemory(backend.allocator(MemoryKind.PINNED)::memoryInfo)
					.thresholds(thresholds)
					.reaction(PressureLevel.ELEVATED, reaction(reactions.getElevated(), pressure))
					.reaction(PressureLevel.WARNING, reaction(reactions.getWarning(), pressure))
					.reaction(PressureLevel.CRITICAL, reaction(reactions.getCritical(), pressure))
					.build());
		int device = backend.deviceId();
		handler.addListener((change) -> events.publishEvent(new GpumemPressureChangedEvent(handler, device, change)));
		callbacks.forEach(handler::addCallback);
		pools.forEach(handler::register);
		handler.check();
		InvalidProperties.under("gpumem.pressure", () -> {
			handler.start(pressure.getCheckInterval());
			return handler;
		});
		return handler;
	}

	/**
	 * Every part of a device other than the primary, as the properties enable them for the primary, named
	 * after the device, its pressure handler with the primary's {@code thresholds}; what was built is closed
	 * again when a part fails.
	 */
	GpuDevice secondary(GpuBackend backend, PressureThresholds thresholds, ApplicationEventPublisher events,
			List<PressureListener> callbacks) {
		int ordinal = backend.deviceId();
		Deque<AutoCloseable> built = new ArrayDeque<>();
		try {
			MemoryBudget budget = budget(backend);
			StratifiedMemoryPool devicePool = built(built, devicePool(secondaryName(ordinal, "device"), backend, budget));
			GpuDevice.Builder device = GpuDevice.builder(backend, devicePool).budget(budget).admission(admission(backend));
			List<MemoryPool> pools = new ArrayList<>(List.of(devicePool));
			if (this.properties.getPinnedPool().isEnabled()) {
				StratifiedMemoryPool pinnedPool = built(built, pinnedPool(secondaryName(ordinal, "pinned"), backend));
				device.pinnedPool(pinnedPool).transfers(new Transfers(pinnedPool));
				pools.add(pinnedPool);
				if (this.properties.getReductionCache().isEnabled()) {
					ReductionBufferCache cache = built(built,
							reductionCache(secondaryName(ordinal, "reduction"), devicePool, pinnedPool));
					device.reductionCache(cache);
					pools.add(cache);
				}
			}
			if (this.properties.getUnifiedPool().isEnabled()) {
				StratifiedMemoryPool unifiedPool = built(built,
						unifiedPool(secondaryName(ordinal, "unified"), backend, budget));
				device.unifiedPool(unifiedPool);
				pools.add(unifiedPool);
			}
			if (this.properties.getPressure().isEnabled()) {
				device.pressure(built(built, pressureHandler(backend, pools, thresholds, events, callbacks)));
			}
			return device.build();
		}
		catch (RuntimeException ex) {
			built.forEach((part) -> closeQuietly(part, ex));
			throw ex;
		}
	}

	private StratifiedMemoryPool pool(String name, String kind, String prefix, MemoryAllocator allocator,
			GpumemProperties.Pool pool, PoolPreset preset) {
		PoolConfig config = PoolConfigs.from(name, prefix, pool, preset, this.properties, this.customizers,
				this.environment);
		try {
			return new StratifiedMemoryPool(FaultInjection.of(kind, allocator, this.properties.getFaultInjection()),
					config);
		}
		catch (IllegalArgumentException | GpuOutOfMemoryException ex) {
			throw new InvalidConfigurationPropertyValueException(prefix + ".warm", name,
					"the pool's warm-up could not be allocated: " + ex.getMessage());
		}
	}

	private static PressureReaction reaction(GpumemProperties.Reaction reaction, GpumemProperties.Pressure pressure) {
		return switch (reaction) {
			case NONE -> PressureReaction.none();
			case SHRINK -> PressureReaction.shrink(pressure.getShrinkTarget());
			case CALLBACK -> PressureReaction.callback();
		};
	}

	private static <T extends AutoCloseable> T built(Deque<AutoCloseable> built, T part) {
		built.push(part);
		return part;
	}

	private static void closeQuietly(AutoCloseable part, RuntimeException failure) {
		try {
			part.close();
		}
		catch (Exception ex) {
			failure.addSuppressed(ex);
		}
	}

}
