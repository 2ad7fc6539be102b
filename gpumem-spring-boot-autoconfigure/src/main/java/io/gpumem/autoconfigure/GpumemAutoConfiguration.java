package io.gpumem.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.allocator.MemoryBudget;
import io.gpumem.autoconfigure.history.OutOfMemoryDumps;
import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaDriver;
import io.gpumem.device.BackendSelection;
import io.gpumem.device.DeviceSelection;
import io.gpumem.device.GpuDevice;
import io.gpumem.device.GpumemDevices;
import io.gpumem.host.HostBackend;
import io.gpumem.limit.DeviceLimit;
import io.gpumem.limit.DeviceLimits;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pool.OutOfMemoryObserver;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.pressure.PressureHandler;
import io.gpumem.pressure.PressureListener;
import io.gpumem.pressure.PressureThresholds;
import io.gpumem.reduction.ReductionBufferCache;
import io.gpumem.transfer.Transfers;

/**
 * Auto-configuration of gpumem from {@code gpumem.*} properties: the backend, the device and its limit, pinned and
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
		FaultInjection.device(backend, properties.getFaultInjection());
		return backend;
	}

	/** The host backend's pinned capacity: the device's when not set. */
	private static long pinnedCapacity(GpumemProperties.Host host) {
		return ((host.getPinnedCapacity() != null) ? host.getPinnedCapacity() : host.getCapacity()).toBytes();
	}

	/**
	 * Where each device's limit is read: the environment (Spring's, so a property of the same name stands in for a
	 * variable) and the process's cgroup.
	 */
	@Bean
	@ConditionalOnMissingBean
	DeviceLimits gpumemDeviceLimits(Environment environment) {
		return DeviceLimits.system(environment::getProperty);
	}

	/** The most of the primary device this process may use, and its source. */
	@Bean
	@ConditionalOnMissingBean
	DeviceLimit gpumemDeviceLimit(GpuBackend backend, DeviceLimits limits) {
		return limits.read(backend);
	}

	/**
	 * The share of the device's limit gpumem may hold ({@code gpumem.memory-fraction}), drawn on by every pool of the
	 * device.
	 */
	@Bean
	@ConditionalOnMissingBean
	MemoryBudget gpumemDeviceBudget(GpuBackend backend, DeviceLimit limit, GpumemProperties properties,
			Environment environment) {
		return primary(backend, properties, List.of(), environment).budget(limit);
	}

	@Bean(name = "gpumemDevicePool")
	@ConditionalOnMissingBean(name = "gpumemDevicePool")
	@Primary
	StratifiedMemoryPool gpumemDevicePool(GpuBackend backend, MemoryBudget budget, GpumemProperties properties,
			ObjectProvider<GpumemPoolCustomizer> customizers, Environment environment) {
		return primary(backend, properties, customizers, environment).devicePool(budget);
	}

	@Bean(name = "gpumemPinnedPool")
	@ConditionalOnMissingBean(name = "gpumemPinnedPool")
	@ConditionalOnBooleanProperty(name = "gpumem.pinned-pool.enabled", matchIfMissing = true)
	StratifiedMemoryPool gpumemPinnedPool(GpuBackend backend, GpumemProperties properties,
			ObjectProvider<GpumemPoolCustomizer> customizers, Environment environment) {
		return primary(backend, properties, customizers, environment).pinnedPool();
	}

	@Bean(name = "gpumemUnifiedPool")
	@ConditionalOnMissingBean(name = "gpumemUnifiedPool")
	@ConditionalOnBooleanProperty("gpumem.unified-pool.enabled")
	StratifiedMemoryPool gpumemUnifiedPool(GpuBackend backend, MemoryBudget budget, GpumemProperties properties,
			ObjectProvider<GpumemPoolCustomizer> customizers, Environment environment) {
		return primary(backend, properties, customizers, environment).unifiedPool(budget);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(name = "gpumemPinnedPool")
	@ConditionalOnBooleanProperty(name = "gpumem.reduction-cache.enabled", matchIfMissing = true)
	ReductionBufferCache gpumemReductionCache(GpuBackend backend,
			@Qualifier("gpumemDevicePool") MemoryPool devicePool, @Qualifier("gpumemPinnedPool") MemoryPool pinnedPool,
			GpumemProperties properties, Environment environment) {
		return primary(backend, properties, List.of(), environment).reductionCache(devicePool, pinnedPool);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(name = "gpumemPinnedPool")
	Transfers gpumemTransfers(@Qualifier("gpumemPinnedPool") MemoryPool pinnedPool) {
		return new Transfers(pinnedPool);
	}

	/**
	 * Admission of GPU work to the device ({@code gpumem.admission.*}), by the bytes of the device pool each request
	 * holds and by permits: no limit on permits unless one is set.
	 */
	@Bean
	@ConditionalOnMissingBean
	GpuAdmission gpumemAdmission(GpuBackend backend, @Qualifier("gpumemDevicePool") MemoryPool devicePool,
			GpumemProperties properties, Environment environment) {
		return primary(backend, properties, List.of(), environment).admission(devicePool);
	}

	@Bean
	@ConditionalOnMissingBean
	PressureThresholds gpumemPressureThresholds(GpumemProperties properties) {
		return DeviceParts.thresholds(properties);
	}

	/**
	 * The primary device, its parts the beans above (or the application's own), which every other device's
	 * parts follow.
	 */
	@Bean(destroyMethod = "")
	@ConditionalOnMissingBean
	GpuDevice gpumemPrimaryDevice(GpuBackend backend, @Qualifier("gpumemDevicePool") MemoryPool devicePool,
			ObjectProvider<DeviceLimit> limit, ObjectProvider<MemoryBudget> budget,
			@Qualifier("gpumemPinnedPool") ObjectProvider<MemoryPool> pinnedPool,
			@Qualifier("gpumemUnifiedPool") ObjectProvider<MemoryPool> unifiedPool,
			ObjectProvider<Transfers> transfers, ObjectProvider<ReductionBufferCache> reductionCache,
			ObjectProvider<PressureHandler> pressure, ObjectProvider<GpuAdmission> admission) {
		GpuDevice.Builder primary = GpuDevice.builder(backend, devicePool);
		limit.ifUnique(primary::limit);
		budget.ifUnique(primary::budget);
		pinnedPool.ifAvailable(primary::pinnedPool);
		unifiedPool.ifAvailable(primary::unifiedPool);
		transfers.ifUnique(primary::transfers);
		reductionCache.ifUnique(primary::reductionCache);
		pressure.ifUnique(primary::pressure);
		admission.ifUnique(primary::admission);
		return primary.build();
	}

	/** The devices after the primary, each with the parts the primary has, of its own, named after it. */
	@Bean
	SecondaryDevices gpumemSecondaryDevices(GpuDevice primary, ObjectProvider<GpumemBackends> backends,
			DeviceLimits limits, GpumemProperties properties, ObjectProvider<GpumemPoolCustomizer> customizers,
			Environment environment, PressureThresholds thresholds, ApplicationEventPublisher events,
			ObjectProvider<PressureListener> callbacks) {
		GpumemBackends opened = backends.getIfAvailable();
		List<GpuDevice> devices = new ArrayList<>();
		try {
			for (GpuBackend backend : (opened != null) ? opened.secondaries() : List.<GpuBackend>of()) {
				devices.add(new DeviceParts(properties, customizers.orderedStream().toList(), environment, backend, false)
					.like(primary, limits, thresholds, events, callbacks.orderedStream().toList()));
			}
		}
		catch (RuntimeException ex) {
			devices.forEach(GpuDevice::close);
			throw ex;
		}
		return new SecondaryDevices(devices);
	}

	/** Every device gpumem manages, the primary first. */
	@Bean
	@ConditionalOnMissingBean
	GpumemDevices gpumemDevices(GpuDevice primary, SecondaryDevices secondaries) {
		List<GpuDevice> devices = new ArrayList<>(List.of(primary));
		devices.addAll(secondaries.devices());
		return new GpumemDevices(devices);
	}

	/**
	 * Tells Boot the application is broken when a device fails for good, so that a liveness probe restarts it,
	 * lazy initialization or not.
	 */
	@Bean
	@Lazy(false)
	DeviceFailureLiveness gpumemDeviceFailureLiveness(GpumemDevices devices, ApplicationEventPublisher events) {
		return new DeviceFailureLiveness(devices, events);
	}

	/** Has every {@link OutOfMemoryObserver} bean observe every pool of every device, lazy initialization or not. */
	@Bean
	@Lazy(false)
	OutOfMemoryObservers gpumemOutOfMemoryObservers(GpumemDevices devices,
			ObjectProvider<OutOfMemoryObserver> observers) {
		return new OutOfMemoryObservers(devices, observers.orderedStream().toList());
	}

	/** Every device's pools, as each device lists them. */
	@Bean
	@ConditionalOnMissingBean
	GpumemPools gpumemPools(GpumemDevices devices) {
		return new GpumemPools(devices);
	}

	/** Publishes the pools' sleeps and wakes; sleeps idle device pools ({@code gpumem.device-pool.sleep-after-idle}). */
	@Bean(destroyMethod = "close")
	PoolSleeps gpumemPoolSleeps(GpumemDevices devices, ApplicationEventPublisher events,
			GpumemProperties properties) {
		return new PoolSleeps(devices, events, properties.getDevicePool().getSleepAfterIdle());
	}

	private static DeviceParts primary(GpuBackend backend, GpumemProperties properties,
			ObjectProvider<GpumemPoolCustomizer> customizers, Environment environment) {
		return primary(backend, properties, customizers.orderedStream().toList(), environment);
	}

	private static DeviceParts primary(GpuBackend backend, GpumemProperties properties,
			List<GpumemPoolCustomizer> customizers, Environment environment) {
		return new DeviceParts(properties, customizers, environment, backend, true);
	}

	/** Writes each out-of-memory report to {@code gpumem.history.oom-dump-dir}, where it is set. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(JsonMapper.class)
	@ConditionalOnProperty("gpumem.history.oom-dump-dir")
	static final class OutOfMemoryDumpConfiguration {

		@Bean
		@ConditionalOnMissingBean
		OutOfMemoryDumps gpumemOutOfMemoryDumps(GpumemProperties properties, ObjectProvider<JsonMapper> json) {
			return new OutOfMemoryDumps(properties.getHistory().getOomDumpDir(), json.getIfAvailable(JsonMapper::new));
		}

	}

	/** The primary device's pressure handler, checking on a schedule and publishing level changes as application events. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty(name = "gpumem.pressure.enabled", matchIfMissing = true)
	static final class PressureConfiguration {

		/** Watches the primary device and shrinks its pools: every {@link MemoryPool} bean. */
		@Bean
		@ConditionalOnMissingBean
		PressureHandler gpumemPressureHandler(GpuBackend backend, ObjectProvider<DeviceLimit> limit,
				ObjectProvider<MemoryBudget> budget, List<MemoryPool> pools, PressureThresholds thresholds,
				GpumemProperties properties, ApplicationEventPublisher events,
				ObjectProvider<PressureListener> callbacks, Environment environment) {
			return primary(backend, properties, List.of(), environment).pressureHandler(limit.getIfUnique(),
					budget.getIfUnique(), pools, thresholds, events, callbacks.orderedStream().toList());
		}

	}

}
