package io.gpumem.autoconfigure;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.core.env.Environment;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.allocator.LimitingAllocator;
import io.gpumem.allocator.MemoryBudget;
import io.gpumem.backend.GpuBackend;
import io.gpumem.backend.VirtualMemory;
import io.gpumem.device.GpuDevice;
import io.gpumem.limit.DeviceLimit;
import io.gpumem.limit.DeviceLimits;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PoolPreset;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.pressure.PressureHandler;
import io.gpumem.pressure.PressureHysteresis;
import io.gpumem.pressure.PressureLevel;
import io.gpumem.pressure.PressureListener;
import io.gpumem.pressure.PressureReaction;
import io.gpumem.pressure.PressureThresholds;
import io.gpumem.reduction.ReductionBufferCache;
import io.gpumem.transfer.Transfers;

/**
 * Builds one device's parts from the properties, named after the device ({@link PoolName}): the
 * auto-configuration's beans build the primary device's parts with it, and {@link #like} builds every other
 * device whole, with the parts the primary device has, so that which parts a device has is decided once.
 */
final class DeviceParts {

	private static final Log logger = LogFactory.getLog(DeviceParts.class);

	private final GpumemProperties properties;

	private final List<GpumemPoolCustomizer> customizers;

	private final Environment environment;

	private final GpuBackend backend;

	private final boolean primary;

	/** The parts of the device of {@code backend}, the {@code primary} device or another. */
	DeviceParts(GpumemProperties properties, List<GpumemPoolCustomizer> customizers, Environment environment,
			GpuBackend backend, boolean primary) {
		this.properties = properties;
		this.customizers = customizers;
		this.environment = environment;
		this.backend = backend;
		this.primary = primary;
	}

	/**
	 * The share of the device's {@code limit} gpumem may hold ({@code gpumem.memory-fraction}), logged once with the
	 * limit and its source.
	 */
	MemoryBudget budget(DeviceLimit limit) {
		double fraction = this.properties.getMemoryFraction();
		MemoryBudget budget = InvalidProperties.under("gpumem", () -> limit.budget(fraction));
		logger.info(limit.describe(budget, fraction));
		return budget;
	}

	StratifiedMemoryPool devicePool(MemoryBudget budget) {
		GpumemProperties.DevicePool pool = this.properties.getDevicePool();
		MemoryAllocator allocator = switch (pool.getAllocator()) {
			case ARENA -> arenaAllocator(pool.getSegments());
			case CUDA_ASYNC -> streamOrderedAllocator();
		};
		return pool(PoolName.DEVICE, "gpumem.device-pool", new LimitingAllocator(allocator, budget), pool,
				pool.getPreset());
	}

	/** The allocator the arena's segments come from: physical memory of an address space, or segment allocations. */
	private MemoryAllocator arenaAllocator(GpumemProperties.Segments segments) {
		if (segments == GpumemProperties.Segments.FIXED) {
			return this.backend.allocator(MemoryKind.DEVICE);
		}
		VirtualMemory virtualMemory = this.backend.virtualMemory();
		if (!virtualMemory.supported()) {
			if (segments == GpumemProperties.Segments.EXPANDABLE) {
				throw new InvalidConfigurationPropertyValueException("gpumem.device-pool.segments", "expandable",
						"expandable segments need virtual memory, which " + this.backend.describe() + " cannot give: "
								+ virtualMemory.reason() + ". Set it to auto or fixed");
			}
			logger.info("The device pool of " + this.backend.describe() + " cuts fixed segments: "
					+ virtualMemory.reason());
		}
		return virtualMemory.allocatorOr(this.backend.allocator(MemoryKind.DEVICE));
	}

	private MemoryAllocator streamOrderedAllocator() {
		try {
			return this.backend.streamOrderedAllocator();
		}
		catch (RuntimeException ex) {
			throw new InvalidConfigurationPropertyValueException("gpumem.device-pool.allocator", "cuda-async",
					"the stream-ordered pool of " + this.backend.describe() + " could not be created: "
							+ ex.getMessage());
		}
	}

	StratifiedMemoryPool pinnedPool() {
		return pool(PoolName.PINNED, "gpumem.pinned-pool", this.backend.allocator(MemoryKind.PINNED),
				this.properties.getPinnedPool(), PoolPreset.DEFAULT);
	}

	StratifiedMemoryPool unifiedPool(MemoryBudget budget) {
		return pool(PoolName.UNIFIED, "gpumem.unified-pool",
				new LimitingAllocator(this.backend.allocator(MemoryKind.UNIFIED), budget),
				this.properties.getUnifiedPool(), PoolPreset.DEFAULT);
	}

	ReductionBufferCache reductionCache(MemoryPool devicePool, MemoryPool pinnedPool) {
		return InvalidProperties.under("gpumem.reduction-cache",
				() -> new ReductionBufferCache(name(PoolName.REDUCTION), devicePool, pinnedPool,
						this.properties.getReductionCache().getMaxBuffersPerKey()));
	}

	/**
	 * Admission of GPU work to the device ({@code gpumem.admission.*}), by the bytes of {@code devicePool} each
	 * request holds and by permits: no limit on permits unless one is set.
	 */
	GpuAdmission admission(MemoryPool devicePool) {
		GpumemProperties.Admission admission = this.properties.getAdmission();
		String device = this.backend.name() + " device " + this.backend.deviceId();
		return InvalidProperties.under("gpumem.admission",
				() -> new GpuAdmission(device, admission.getMaxConcurrent(), admission.getMaxWait(), devicePool));
	}

	/** The pressure thresholds {@code gpumem.pressure.thresholds} sets, every device's. */
	static PressureThresholds thresholds(GpumemProperties properties) {
		GpumemProperties.Thresholds thresholds = properties.getPressure().getThresholds();
		return InvalidProperties.under("gpumem.pressure.thresholds", () -> new PressureThresholds(
				thresholds.getElevated(), thresholds.getWarning(), thresholds.getCritical()));
	}

	/**
	 * The device's pressure handler, watching its memory against its {@code limit} (the card's where there is none)
	 * and shrinking its {@code pools}, checking on a schedule and publishing level changes as application events.
	 */
	PressureHandler pressureHandler(@Nullable DeviceLimit limit, @Nullable MemoryBudget budget,
			List<? extends MemoryPool> pools, PressureThresholds thresholds, ApplicationEventPublisher events,
			List<PressureListener> callbacks) {
		GpumemProperties.Pressure pressure = this.properties.getPressure();
		GpumemProperties.Reactions reactions = pressure.getReactions();
		GpumemProperties.Hysteresis hysteresis = pressure.getHysteresis();
		PressureHandler.Builder builder = PressureHandler.builder(deviceMemory(limit, budget, pools));
		if (limit != null) {
			limit.protectedUtilization().ifPresent(builder::protectedUtilization);
		}
		PressureHandler handler = InvalidProperties.under("gpumem.pressure",
				() -> builder
					.pinnedMemory(this.backend.allocator(MemoryKind.PINNED)::memoryInfo)
					.thresholds(thresholds)
					.hysteresis(InvalidProperties.under("gpumem.pressure.hysteresis",
							() -> new PressureHysteresis(hysteresis.getMargin(), hysteresis.getMinDuration())))
					.reaction(PressureLevel.ELEVATED, reaction(reactions.getElevated(), pressure))
					.reaction(PressureLevel.WARNING, reaction(reactions.getWarning(), pressure))
					.reaction(PressureLevel.CRITICAL, reaction(reactions.getCritical(), pressure))
					.build());
		int device = this.backend.deviceId();
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
	 * The device's memory as pressure weighs it: against its limit ({@link DeviceLimit#memoryInfo}), what gpumem holds
	 * there being what the budget lends or, without one, what the device pools reserve.
	 */
	private Supplier<MemoryInfo> deviceMemory(@Nullable DeviceLimit limit, @Nullable MemoryBudget budget,
			List<? extends MemoryPool> pools) {
		if (limit == null) {
			return this.backend::memoryInfo;
		}
		LongSupplier held = (budget != null) ? budget::usedBytes
				: () -> pools.stream().filter((pool) -> pool.kind() != MemoryKind.PINNED)
					.mapToLong(MemoryPool::reservedBytes).sum();
		return () -> limit.memoryInfo(this.backend.memoryInfo(), held.getAsLong());
	}

	/**
	 * This device whole, with the parts {@code primary} has (transfers and the reduction cache only over a
	 * pinned pool of its own), its pressure handler with the primary's {@code thresholds}; what was built is
	 * closed again when a part fails.
	 */
	GpuDevice like(GpuDevice primary, DeviceLimits limits, PressureThresholds thresholds,
			ApplicationEventPublisher events, List<PressureListener> callbacks) {
		Deque<AutoCloseable> built = new ArrayDeque<>();
		try {
			DeviceLimit limit = limits.read(this.backend);
			MemoryBudget budget = budget(limit);
			StratifiedMemoryPool devicePool = built(built, devicePool(budget));
			GpuDevice.Builder device = GpuDevice.builder(this.backend, devicePool)
				.limit(limit)
				.budget(budget)
				.admission(admission(devicePool));
			List<MemoryPool> pools = new ArrayList<>(List.of(devicePool));
			StratifiedMemoryPool pinnedPool = primary.pinnedPool().isPresent() ? built(built, pinnedPool()) : null;
			if (pinnedPool != null) {
				device.pinnedPool(pinnedPool);
				pools.add(pinnedPool);
			}
			if (pinnedPool != null && primary.transfers().isPresent()) {
				device.transfers(new Transfers(pinnedPool));
			}
			if (pinnedPool != null && primary.reductionCache().isPresent()) {
				device.reductionCache(built(built, reductionCache(devicePool, pinnedPool)));
			}
			if (primary.unifiedPool().isPresent()) {
				StratifiedMemoryPool unifiedPool = built(built, unifiedPool(budget));
				device.unifiedPool(unifiedPool);
				pools.add(unifiedPool);
			}
			if (primary.pressure().isPresent()) {
				device.pressure(built(built, pressureHandler(limit, budget, pools, thresholds, events, callbacks)));
			}
			return device.build();
		}
		catch (RuntimeException ex) {
			built.forEach((part) -> closeQuietly(part, ex));
			throw ex;
		}
	}

	private String name(PoolName pool) {
		return pool.on(this.backend.deviceId(), this.primary);
	}

	private StratifiedMemoryPool pool(PoolName role, String prefix, MemoryAllocator allocator,
			GpumemProperties.Pool pool, PoolPreset preset) {
		String name = name(role);
		PoolConfig config = PoolConfigs.from(name, prefix, pool, preset, this.properties, this.customizers,
				this.environment);
		try {
			return new StratifiedMemoryPool(FaultInjection.of(role, allocator, this.properties.getFaultInjection()),
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
