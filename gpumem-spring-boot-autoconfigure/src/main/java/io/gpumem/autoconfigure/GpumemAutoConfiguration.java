package io.gpumem.autoconfigure;

import java.util.List;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.allocator.LimitingAllocator;
import io.gpumem.allocator.MemoryBudget;
import io.gpumem.backend.BackendSelection;
import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaDriver;
import io.gpumem.host.HostBackend;
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
 * Auto-configuration of gpumem from {@code gpumem.*} properties: the backend, the device, pinned and
 * unified pools, transfers, the reduction-buffer cache, admission of GPU work and the pressure handler. Every bean backs off
 * when the application defines its own (pools by name: {@code gpumemDevicePool},
 * {@code gpumemPinnedPool}, {@code gpumemUnifiedPool}); {@code gpumem.enabled=false} turns it all off.
 * A {@link CudaDriver} bean, where the application defines one, is the driver CUDA is probed and opened
 * through instead of JCuda: a fake driver in tests, or an instrumented one.
 */
@AutoConfiguration
@ConditionalOnBooleanProperty(name = "gpumem.enabled", matchIfMissing = true)
@EnableConfigurationProperties(GpumemProperties.class)
public final class GpumemAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	BackendSelection gpumemBackendSelection(GpumemProperties properties, ObjectProvider<CudaDriver> driver) {
		GpumemProperties.Host host = properties.getHost();
		CudaDriver custom = driver.getIfAvailable();
		return InvalidProperties.named(
				(setting) -> setting.equals("device") ? "gpumem.device" : "gpumem.host." + setting,
				() -> BackendSelection.select(properties.getBackend(), properties.getDevice(),
						host.getCapacity().toBytes(), pinnedCapacity(host), (custom != null) ? () -> custom : null));
	}

	@Bean
	@ConditionalOnMissingBean
	GpuBackend gpuBackend(BackendSelection selection, GpumemProperties properties) {
		GpuBackend backend = selection.backend();
		if (backend instanceof HostBackend) {
			GpumemProperties.Host host = properties.getHost();
			HostMemoryCheck.check(host.getCapacity().toBytes(), pinnedCapacity(host));
		}
		return backend;
	}

	/** The host backend's pinned capacity: the device's when not set. */
	private static long pinnedCapacity(GpumemProperties.Host host) {
		return ((host.getPinnedCapacity() != null) ? host.getPinnedCapacity() : host.getCapacity()).toBytes();
	}

	/** The share of the device gpumem may hold ({@code gpumem.memory-fraction}), drawn on by every pool of the device. */
	@Bean
	@ConditionalOnMissingBean
	MemoryBudget gpumemDeviceBudget(GpuBackend backend, GpumemProperties properties) {
		long total = backend.allocator(MemoryKind.DEVICE).memoryInfo().totalBytes();
		return InvalidProperties.under("gpumem", () -> MemoryBudget.ofFraction(total, properties.getMemoryFraction()));
	}

	@Bean(name = "gpumemDevicePool")
	@ConditionalOnMissingBean(name = "gpumemDevicePool")
	@Primary
	StratifiedMemoryPool gpumemDevicePool(GpuBackend backend, MemoryBudget budget, GpumemProperties properties,
			ObjectProvider<GpumemPoolCustomizer> customizers, Environment environment) {
		GpumemProperties.DevicePool pool = properties.getDevicePool();
		return pool("device", "gpumem.device-pool", FaultInjection.of("device",
				new LimitingAllocator(backend.allocator(MemoryKind.DEVICE), budget), properties.getFaultInjection()),
				PoolConfigs.from("device", "gpumem.device-pool", pool, pool.getPreset(), properties,
						customizers.orderedStream().toList(), environment));
	}

	@Bean(name = "gpumemPinnedPool")
	@ConditionalOnMissingBean(name = "gpumemPinnedPool")
	@ConditionalOnBooleanProperty(name = "gpumem.pinned-pool.enabled", matchIfMissing = true)
	StratifiedMemoryPool gpumemPinnedPool(GpuBackend backend, GpumemProperties properties,
			ObjectProvider<GpumemPoolCustomizer> customizers, Environment environment) {
		return pool("pinned", "gpumem.pinned-pool",
				FaultInjection.of("pinned", backend.allocator(MemoryKind.PINNED), properties.getFaultInjection()),
				PoolConfigs.from("pinned", "gpumem.pinned-pool", properties.getPinnedPool(), PoolPreset.DEFAULT,
						properties, customizers.orderedStream().toList(), environment));
	}

	@Bean(name = "gpumemUnifiedPool")
	@ConditionalOnMissingBean(name = "gpumemUnifiedPool")
	@ConditionalOnBooleanProperty("gpumem.unified-pool.enabled")
	StratifiedMemoryPool gpumemUnifiedPool(GpuBackend backend, MemoryBudget budget, GpumemProperties properties,
			ObjectProvider<GpumemPoolCustomizer> customizers, Environment environment) {
		return pool("unified", "gpumem.unified-pool", FaultInjection.of("unified",
				new LimitingAllocator(backend.allocator(MemoryKind.UNIFIED), budget), properties.getFaultInjection()),
				PoolConfigs.from("unified", "gpumem.unified-pool", properties.getUnifiedPool(), PoolPreset.DEFAULT,
						properties, customizers.orderedStream().toList(), environment));
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(name = "gpumemPinnedPool")
	@ConditionalOnBooleanProperty(name = "gpumem.reduction-cache.enabled", matchIfMissing = true)
	ReductionBufferCache gpumemReductionCache(@Qualifier("gpumemDevicePool") StratifiedMemoryPool devicePool,
			@Qualifier("gpumemPinnedPool") StratifiedMemoryPool pinnedPool, GpumemProperties properties) {
		return InvalidProperties.under("gpumem.reduction-cache", () -> new ReductionBufferCache("reduction",
				devicePool.allocator(), pinnedPool, properties.getReductionCache().getMaxBuffersPerKey()));
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(name = "gpumemPinnedPool")
	Transfers gpumemTransfers(@Qualifier("gpumemPinnedPool") StratifiedMemoryPool pinnedPool) {
		return new Transfers(pinnedPool);
	}

	/** Admission of GPU work to the device ({@code gpumem.admission.*}): no limit unless one is set. */
	@Bean
	@ConditionalOnMissingBean
	GpuAdmission gpumemAdmission(GpuBackend backend, GpumemProperties properties) {
		GpumemProperties.Admission admission = properties.getAdmission();
		String device = backend.name() + " device " + backend.deviceId();
		return InvalidProperties.under("gpumem.admission",
				() -> new GpuAdmission(device, admission.getMaxConcurrent(), admission.getMaxWait()));
	}

	@Bean
	@ConditionalOnMissingBean
	GpumemPools gpumemPools(List<MemoryPool> pools) {
		return new GpumemPools(pools);
	}

	@Bean
	@ConditionalOnMissingBean
	PressureThresholds gpumemPressureThresholds(GpumemProperties properties) {
		GpumemProperties.Thresholds thresholds = properties.getPressure().getThresholds();
		return InvalidProperties.under("gpumem.pressure.thresholds", () -> new PressureThresholds(
				thresholds.getElevated(), thresholds.getWarning(), thresholds.getCritical()));
	}

	private static StratifiedMemoryPool pool(String name, String prefix, MemoryAllocator allocator,
			PoolConfig config) {
		try {
			return new StratifiedMemoryPool(allocator, config);
		}
		catch (IllegalArgumentException | GpuOutOfMemoryException ex) {
			throw new InvalidConfigurationPropertyValueException(prefix + ".warm", name,
					"the pool's warm-up could not be allocated: " + ex.getMessage());
		}
	}

	/** The pressure handler, checking on a schedule and publishing level changes as application events. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty(name = "gpumem.pressure.enabled", matchIfMissing = true)
	static final class PressureConfiguration {

		@Bean
		@ConditionalOnMissingBean
		PressureHandler gpumemPressureHandler(GpuBackend backend, GpumemPools pools, PressureThresholds thresholds,
				GpumemProperties properties, ApplicationEventPublisher events,
				ObjectProvider<PressureListener> callbacks) {
			GpumemProperties.Pressure pressure = properties.getPressure();
			GpumemProperties.Reactions reactions = pressure.getReactions();
			PressureHandler handler = InvalidProperties.under("gpumem.pressure",
					() -> PressureHandler.builder(backend::memoryInfo)
						.pinnedMemory(backend.allocator(MemoryKind.PINNED)::memoryInfo)
						.thresholds(thresholds)
						.reaction(PressureLevel.ELEVATED, reaction(reactions.getElevated(), pressure))
						.reaction(PressureLevel.WARNING, reaction(reactions.getWarning(), pressure))
						.reaction(PressureLevel.CRITICAL, reaction(reactions.getCritical(), pressure))
						.build());
			handler.addListener((change) -> events.publishEvent(new GpumemPressureChangedEvent(handler, change)));
			callbacks.orderedStream().forEach(handler::addCallback);
			pools.asMap().values().forEach(handler::register);
			handler.check();
			InvalidProperties.under("gpumem.pressure", () -> {
				handler.start(pressure.getCheckInterval());
				return handler;
			});
			return handler;
		}

		private static PressureReaction reaction(GpumemProperties.Reaction reaction, GpumemProperties.Pressure pressure) {
			return switch (reaction) {
				case NONE -> PressureReaction.none();
				case SHRINK -> PressureReaction.shrink(pressure.getShrinkTarget());
				case CALLBACK -> PressureReaction.callback();
			};
		}

	}

}
