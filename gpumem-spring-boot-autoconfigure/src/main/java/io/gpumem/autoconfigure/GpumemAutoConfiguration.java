package io.gpumem.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.allocator.MemoryBudget;
import io.gpumem.backend.BackendSelection;
import io.gpumem.backend.DeviceSelection;
import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaDriver;
import io.gpumem.device.GpuDevice;
import io.gpumem.device.GpumemDevices;
import io.gpumem.host.HostBackend;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.pressure.PressureHandler;
import io.gpumem.pressure.PressureListener;
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

	/** Every device's backend: {@code gpumem.device} alone, or the devices {@code gpumem.devices} selects. */
	@Bean
	@ConditionalOnMissingBean(BackendSelection.class)
	GpumemBackends gpumemBackends(GpumemProperties properties, ObjectProvider<CudaDriver> driver) {
		GpumemProperties.Host host = properties.getHost();
		CudaDriver custom = driver.getIfAvailable();
		Supplier<CudaDriver> loader = (custom != null) ? () -> custom : null;
		long capacity = host.getCapacity().toBytes();
		return InvalidProperties.named(
				(setting) -> (setting.startsWith("device") || setting.startsWith("host.")) ? "gpumem." + setting
						: "gpumem.host." + setting,
				() -> new GpumemBackends((properties.getDevices() == null)
						? List.of(BackendSelection.select(properties.getBackend(), properties.getDevice(), capacity,
								pinnedCapacity(host), loader))
						: BackendSelection.selectAll(properties.getBackend(),
								DeviceSelection.parse(properties.getDevices()), capacity, pinnedCapacity(host),
								host.getDevices(), loader)));
	}

	@Bean
	@ConditionalOnMissingBean
	BackendSelection gpumemBackendSelection(GpumemBackends backends) {
		return backends.primary();
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
	MemoryBudget gpumemDeviceBudget(GpuBackend backend, GpumemProperties properties, Environment environment) {
		return parts(properties, List.of(), environment).budget(backend);
	}

	@Bean(name = "gpumemDevicePool")
	@ConditionalOnMissingBean(name = "gpumemDevicePool")
	@Primary
	StratifiedMemoryPool gpumemDevicePool(GpuBackend backend, MemoryBudget budget, GpumemProperties properties,
			ObjectProvider<GpumemPoolCustomizer> customizers, Environment environment) {
		return parts(properties, customizers, environment).devicePool("device", backend, budget);
	}

	@Bean(name = "gpumemPinnedPool")
	@ConditionalOnMissingBean(name = "gpumemPinnedPool")
	@ConditionalOnBooleanProperty(name = "gpumem.pinned-pool.enabled", matchIfMissing = true)
	StratifiedMemoryPool gpumemPinnedPool(GpuBackend backend, GpumemProperties properties,
			ObjectProvider<GpumemPoolCustomizer> customizers, Environment environment) {
		return parts(properties, customizers, environment).pinnedPool("pinned", backend);
	}

	@Bean(name = "gpumemUnifiedPool")
	@ConditionalOnMissingBean(name = "gpumemUnifiedPool")
	@ConditionalOnBooleanProperty("gpumem.unified-pool.enabled")
	StratifiedMemoryPool gpumemUnifiedPool(GpuBackend backend, MemoryBudget budget, GpumemProperties properties,
			ObjectProvider<GpumemPoolCustomizer> customizers, Environment environment) {
		return parts(properties, customizers, environment).unifiedPool("unified", backend, budget);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(name = "gpumemPinnedPool")
	@ConditionalOnBooleanProperty(name = "gpumem.reduction-cache.enabled", matchIfMissing = true)
	ReductionBufferCache gpumemReductionCache(@Qualifier("gpumemDevicePool") StratifiedMemoryPool devicePool,
			@Qualifier("gpumemPinnedPool") StratifiedMemoryPool pinnedPool, GpumemProperties properties,
			Environment environment) {
		return parts(properties, List.of(), environment).reductionCache("reduction", devicePool, pinnedPool);
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
	GpuAdmission gpumemAdmission(GpuBackend backend, GpumemProperties properties, Environment environment) {
		return parts(properties, List.of(), environment).admission(backend);
	}

	@Bean
	@ConditionalOnMissingBean
	PressureThresholds gpumemPressureThresholds(GpumemProperties properties, Environment environment) {
		return parts(properties, List.of(), environment).thresholds();
	}

	/** The devices after the primary, each with every part of its own, named after it. */
	@Bean
	SecondaryDevices gpumemSecondaryDevices(ObjectProvider<GpumemBackends> backends, GpumemProperties properties,
			ObjectProvider<GpumemPoolCustomizer> customizers, Environment environment, PressureThresholds thresholds,
			ApplicationEventPublisher events, ObjectProvider<PressureListener> callbacks) {
		GpumemBackends opened = backends.getIfAvailable();
		if (opened == null) {
			return new SecondaryDevices(List.of());
		}
		DeviceParts parts = parts(properties, customizers, environment);
		List<PressureListener> listeners = callbacks.orderedStream().toList();
		List<GpuDevice> devices = new ArrayList<>();
		try {
			opened.secondaries()
				.forEach((backend) -> devices.add(parts.secondary(backend, thresholds, events, listeners)));
		}
		catch (RuntimeException ex) {
			devices.forEach(GpuDevice::close);
			throw ex;
		}
		return new SecondaryDevices(devices);
	}

	/** Every device gpumem manages, the primary (today's beans) first. */
	@Bean
	@ConditionalOnMissingBean
	GpumemDevices gpumemDevices(GpuBackend backend, @Qualifier("gpumemDevicePool") StratifiedMemoryPool devicePool,
			ObjectProvider<MemoryBudget> budget,
			@Qualifier("gpumemPinnedPool") ObjectProvider<StratifiedMemoryPool> pinnedPool,
			@Qualifier("gpumemUnifiedPool") ObjectProvider<StratifiedMemoryPool> unifiedPool,
			ObjectProvider<Transfers> transfers, ObjectProvider<ReductionBufferCache> reductionCache,
			ObjectProvider<PressureHandler> pressure, ObjectProvider<GpuAdmission> admission,
			SecondaryDevices secondaries) {
		GpuDevice.Builder primary = GpuDevice.builder(backend, devicePool);
		budget.ifUnique(primary::budget);
		pinnedPool.ifAvailable(primary::pinnedPool);
		unifiedPool.ifAvailable(primary::unifiedPool);
		transfers.ifUnique(primary::transfers);
		reductionCache.ifUnique(primary::reductionCache);
		pressure.ifUnique(primary::pressure);
		admission.ifUnique(primary::admission);
		List<GpuDevice> devices = new ArrayList<>(List.of(primary.build()));
		devices.addAll(secondaries.devices());
		return new GpumemDevices(devices);
	}

	/** The primary device's pools (every {@link MemoryPool} bean), then the other devices'. */
	@Bean
	@ConditionalOnMissingBean
	GpumemPools gpumemPools(GpuBackend backend, List<MemoryPool> pools, SecondaryDevices secondaries) {
		Map<Integer, List<MemoryPool>> byDevice = new LinkedHashMap<>();
		byDevice.put(backend.deviceId(), pools);
		secondaries.devices().forEach((device) -> byDevice.put(device.ordinal(), poolsOf(device)));
		return new GpumemPools(byDevice);
	}

	private static List<MemoryPool> poolsOf(GpuDevice device) {
		List<MemoryPool> pools = new ArrayList<>(List.of(device.devicePool()));
		device.pinnedPool().ifPresent(pools::add);
		device.reductionCache().ifPresent(pools::add);
		device.unifiedPool().ifPresent(pools::add);
		return pools;
	}

	private static DeviceParts parts(GpumemProperties properties, ObjectProvider<GpumemPoolCustomizer> customizers,
			Environment environment) {
		return parts(properties, customizers.orderedStream().toList(), environment);
	}

	private static DeviceParts parts(GpumemProperties properties, List<GpumemPoolCustomizer> customizers,
			Environment environment) {
		return new DeviceParts(properties, customizers, environment);
	}

	/** The primary device's pressure handler, checking on a schedule and publishing level changes as application events. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty(name = "gpumem.pressure.enabled", matchIfMissing = true)
	static final class PressureConfiguration {

		/** Watches the primary device and shrinks its pools: every {@link MemoryPool} bean. */
		@Bean
		@ConditionalOnMissingBean
		PressureHandler gpumemPressureHandler(GpuBackend backend, List<MemoryPool> pools, PressureThresholds thresholds,
				GpumemProperties properties, ApplicationEventPublisher events,
				ObjectProvider<PressureListener> callbacks, Environment environment) {
			return parts(properties, List.of(), environment).pressureHandler(backend, pools, thresholds, events,
					callbacks.orderedStream().toList());
		}

	}

}
