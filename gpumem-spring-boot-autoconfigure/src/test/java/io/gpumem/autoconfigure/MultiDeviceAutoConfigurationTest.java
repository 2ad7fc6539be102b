package io.gpumem.autoconfigure;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.HealthContributor;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.gpumem.autoconfigure.health.GpumemHealthContributorAutoConfiguration;
import io.gpumem.autoconfigure.metrics.GpumemMetricsAutoConfiguration;
import io.gpumem.backend.GpuBackend;
import io.gpumem.buffer.GpuBuffer;
import io.gpumem.cuda.CudaDriver;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.device.GpuDevice;
import io.gpumem.device.GpumemDevices;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.pressure.PressureLevel;
import io.gpumem.reduction.ReductionBufferCache;
import io.gpumem.transfer.Transfers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** {@code gpumem.devices}: every selected device with parts of its own, the primary's beans as before. */
class MultiDeviceAutoConfigurationTest {

	private static final long CAPACITY = 64L << 20;

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(GpumemAutoConfiguration.class, GpumemMetricsAutoConfiguration.class,
				GpumemHealthContributorAutoConfiguration.class))
		.withBean(SimpleMeterRegistry.class)
		.withPropertyValues("gpumem.backend=host", "gpumem.host.capacity=64MB", "gpumem.memory-fraction=1");

	@Test
	void withoutDevicesGpumemManagesTheOneDeviceOfItsBeans() {
		this.runner.run((context) -> {
			GpumemDevices devices = context.getBean(GpumemDevices.class);
			assertThat(devices.all()).hasSize(1);
			GpuDevice primary = devices.primary();
			assertThat(primary.backend()).isSameAs(context.getBean(GpuBackend.class));
			assertThat(primary.devicePool()).isSameAs(context.getBean("gpumemDevicePool"));
			assertThat(primary.pinnedPool()).containsSame(context.getBean("gpumemPinnedPool", StratifiedMemoryPool.class));
			assertThat(primary.pressure()).isPresent();
			assertThat(context.getBean("gpumemHealthIndicator")).isInstanceOf(HealthIndicator.class);
		});
	}

	@Test
	void everyOtherDeviceHasTheVeryPartsThePrimaryHasNoMoreNoFewer() {
		this.runner
			.withPropertyValues("gpumem.host.devices=2", "gpumem.devices=all", "gpumem.pinned-pool.enabled=false",
					"gpumem.unified-pool.enabled=true", "gpumem.pressure.enabled=false")
			.run((context) -> {
				GpumemDevices devices = context.getBean(GpumemDevices.class);
				for (GpuDevice device : devices.all()) {
					assertThat(device.pinnedPool()).as("device %d", device.ordinal()).isEmpty();
					assertThat(device.transfers()).isEmpty();
					assertThat(device.reductionCache()).isEmpty();
					assertThat(device.unifiedPool()).isPresent();
					assertThat(device.pressure()).isEmpty();
				}
				assertThat(context.getBean(GpumemPools.class).asMap()).containsOnlyKeys("device", "unified",
						"device1.device", "device1.unified");
			});
	}

	@Test
	void aDeviceAfterThePrimaryFollowsAPrimaryPartTheApplicationDefinedItself() {
		this.runner.withUserConfiguration(OwnReductionCache.class)
			.withPropertyValues("gpumem.host.devices=2", "gpumem.devices=all", "gpumem.reduction-cache.enabled=false")
			.run((context) -> {
				GpuDevice second = context.getBean(GpumemDevices.class).get(1);
				assertThat(context.getBean(GpumemDevices.class).primary().reductionCache())
					.containsSame(context.getBean(ReductionBufferCache.class));
				assertThat(second.reductionCache()).as("the primary has one, so device 1 has its own").isPresent();
				assertThat(second.reductionCache().orElseThrow().name()).isEqualTo("device1.reduction");
			});
	}

	@Test
	void withoutAPinnedPoolAnotherDeviceHasNeitherTransfersNorReductionCacheWhateverThePrimaryHas() {
		this.runner.withUserConfiguration(OwnTransfers.class)
			.withPropertyValues("gpumem.host.devices=2", "gpumem.devices=all", "gpumem.pinned-pool.enabled=false")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				GpumemDevices devices = context.getBean(GpumemDevices.class);
				assertThat(devices.primary().transfers()).containsSame(context.getBean(Transfers.class));
				assertThat(devices.get(1).pinnedPool()).isEmpty();
				assertThat(devices.get(1).transfers()).isEmpty();
				assertThat(devices.get(1).reductionCache()).isEmpty();
			});
	}

	@Test
	void theHostBackendEmulatesEveryDeviceEachWithItsOwnPoolsCapacityAndPressure() {
		this.runner.withUserConfiguration(PressureEvents.class)
			.withPropertyValues("gpumem.host.devices=2", "gpumem.devices=all")
			.run((context) -> {
				GpumemDevices devices = context.getBean(GpumemDevices.class);
				assertThat(devices.all()).extracting(GpuDevice::ordinal).containsExactly(0, 1);
				assertThat(context.getBean(GpumemPools.class).asMap()).containsOnlyKeys("device", "pinned", "reduction",
						"device1.device", "device1.pinned", "device1.reduction");
				assertThat(context.getBean(GpumemPools.class).device("device1.pinned")).isEqualTo(1);
				GpuDevice second = devices.get(1);
				assertThat(second.backend()).isNotSameAs(context.getBean(GpuBackend.class));
				assertThat(second.transfers()).isPresent();
				assertThat(second.admission()).isPresent();

				try (GpuBuffer first = devices.primary().devicePool().acquire(CAPACITY);
						GpuBuffer other = second.devicePool().acquire(CAPACITY)) {
					assertThatExceptionOfType(GpuOutOfMemoryException.class)
						.isThrownBy(() -> second.devicePool().acquire(1 << 20));
					assertThat(second.pressure().orElseThrow().check()).as("within the minimum duration of the refusal")
						.isEqualTo(PressureLevel.OUT_OF_MEMORY);
					assertThat(devices.primary().pressure().orElseThrow().check()).isEqualTo(PressureLevel.CRITICAL);
					List<Integer> changed = context.getBean(PressureEvents.class).devices;
					assertThat(changed).contains(1);
				}
				assertThat(devices.primary().pressure().orElseThrow().statistics().outOfMemoryRefusals()).isZero();
			});
	}

	@Test
	void meterAndHealthShowEveryDevice() {
		this.runner.withPropertyValues("gpumem.host.devices=2", "gpumem.devices=0,1").run((context) -> {
			SimpleMeterRegistry registry = context.getBean(SimpleMeterRegistry.class);
			context.getBeansOfType(MeterBinder.class).values().forEach((binder) -> binder.bindTo(registry));
			GpuDevice second = context.getBean(GpumemDevices.class).get(1);
			try (GpuBuffer lent = second.devicePool().acquire(1 << 20)) {
				assertThat(registry.get("gpumem.pool.memory")
					.tags("pool", "device1.device", "device", "1", "state", "used")
					.gauge()
					.value()).isEqualTo(1 << 20);
				assertThat(registry.get("gpumem.pool.memory").tags("pool", "device", "device", "0", "state", "used")
					.gauge()
					.value()).isZero();
			}
			assertThat(registry.get("gpumem.device.memory.total").tags("device", "1").gauge().value())
				.isEqualTo(CAPACITY);
			assertThat(registry.get("gpumem.pressure.level").tags("device", "1", "memory", "device").gauge().value())
				.isZero();
			HealthContributor health = context.getBean("gpumemHealthIndicator", HealthContributor.class);
			assertThat(health).isInstanceOf(CompositeHealthContributor.class);
			CompositeHealthContributor perDevice = (CompositeHealthContributor) health;
			assertThat(perDevice.stream().map((entry) -> entry.name())).containsExactly("device0", "device1");
			HealthIndicator device1 = (HealthIndicator) perDevice.getContributor("device1");
			assertThat(device1.health(true).getStatus()).isEqualTo(Status.UP);
		});
	}

	@Test
	void cudaDevicesOpenThroughOneDriverThePrimaryFirstAndAreReleasedAtClose() {
		FakeCudaDriver driver = new FakeCudaDriver(CAPACITY).devices(3);
		this.runner.withBean(CudaDriver.class, () -> driver)
			.withPropertyValues("gpumem.backend=cuda", "gpumem.devices=2,0", "gpumem.pinned-pool.enabled=false")
			.run((context) -> {
				assertThat(context.getBean(GpuBackend.class).deviceId()).isEqualTo(2);
				GpumemDevices devices = context.getBean(GpumemDevices.class);
				assertThat(devices.all()).extracting(GpuDevice::ordinal).containsExactly(2, 0);
				assertThat(devices.get(0).pinnedPool()).isEmpty();
				assertThat(context.getBean(GpumemPools.class).asMap()).containsOnlyKeys("device", "device0.device");
				assertThat(driver.retainedContexts()).isEqualTo(2);
				try (GpuBuffer lent = devices.get(0).devicePool().acquire(3 << 20)) {
					assertThat(driver.usedBytes(0)).isPositive();
					assertThat(driver.usedBytes(2)).isZero();
				}
			});
		assertThat(driver.retainedContexts()).as("every device's context released").isZero();
		assertThat(driver.usedBytes(0)).isZero();
	}

	@Test
	void aDeviceTheBackendDoesNotHaveStopsStartupNamingItsPlaceInTheList() {
		this.runner.withBean(CudaDriver.class, () -> new FakeCudaDriver(CAPACITY).devices(2))
			.withPropertyValues("gpumem.backend=cuda", "gpumem.devices=0,1,4")
			.run((context) -> {
				assertThat(context).hasFailed();
				assertThat(context.getStartupFailure()).rootCause()
					.isInstanceOfSatisfying(InvalidConfigurationPropertyValueException.class, (ex) -> {
						assertThat(ex.getName()).isEqualTo("gpumem.devices[2]");
						assertThat(ex.getValue()).isEqualTo(4);
						assertThat(ex.getReason()).isEqualTo("must name a device that exists: the CUDA driver found 2 device(s)");
					});
			});
		this.runner.withPropertyValues("gpumem.devices=0,first").run((context) -> assertThat(context.getStartupFailure())
			.rootCause()
			.isInstanceOfSatisfying(InvalidConfigurationPropertyValueException.class,
					(ex) -> assertThat(ex.getName()).isEqualTo("gpumem.devices[1]")));
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnTransfers {

		@Bean(destroyMethod = "close")
		StratifiedMemoryPool myPinnedPool(GpuBackend backend) {
			return new StratifiedMemoryPool(backend.allocator(MemoryKind.PINNED), PoolConfig.builder("mine").build());
		}

		@Bean
		Transfers myTransfers(@Qualifier("myPinnedPool") StratifiedMemoryPool myPinnedPool) {
			return new Transfers(myPinnedPool);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnReductionCache {

		@Bean
		ReductionBufferCache myReductionCache(@Qualifier("gpumemDevicePool") MemoryPool device,
				@Qualifier("gpumemPinnedPool") MemoryPool pinned) {
			return new ReductionBufferCache("mine", device, pinned, 2);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PressureEvents implements ApplicationListener<GpumemPressureChangedEvent> {

		final List<Integer> devices = new CopyOnWriteArrayList<>();

		@Override
		public void onApplicationEvent(GpumemPressureChangedEvent event) {
			this.devices.add(event.getDevice());
		}

	}

}
