package io.gpumem.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.availability.ApplicationAvailabilityAutoConfiguration;
import org.springframework.boot.availability.ApplicationAvailability;
import org.springframework.boot.availability.LivenessState;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.gpumem.allocator.AllocatorDecorator;
import io.gpumem.allocator.FaultInjectingAllocator;
import io.gpumem.device.GpuDevice;
import io.gpumem.memory.GpuDeviceFailedException;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code gpumem.fault-injection}: allocations refused and a device failed on purpose, so that users' tests reach
 * their out-of-memory and device-fault paths.
 */
@ExtendWith(OutputCaptureExtension.class)
class FaultInjectionTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(GpumemAutoConfiguration.class))
		.withPropertyValues("gpumem.backend=host", "gpumem.host.capacity=64MB", "gpumem.pressure.enabled=false");

	@Test
	void offUnlessSet() {
		this.runner.run((context) -> assertThat(AllocatorDecorator.find(
				context.getBean("gpumemDevicePool", StratifiedMemoryPool.class).allocator(),
				FaultInjectingAllocator.class)).isNull());
	}

	@Test
	void aProbabilityOfOneRefusesEveryMissOfTheNamedPoolAndLeavesItConsistent(CapturedOutput output) {
		this.runner
			.withPropertyValues("gpumem.fault-injection.probability=1", "gpumem.fault-injection.pools=device")
			.run((context) -> {
				StratifiedMemoryPool device = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
				assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> device.acquire(4096))
					.withMessageContaining("injected fault");
				assertThat(device.statistics().reservedBytes()).isZero();
				assertThat(device.statistics().allocationFailures()).isEqualTo(1);
				context.getBean("gpumemPinnedPool", StratifiedMemoryPool.class).acquire(4096).close();
				assertThat(output).contains("Pool 'device' has allocations refused on purpose "
						+ "(gpumem.fault-injection): each with probability 1.0. This is for tests.");
			});
	}

	@Test
	void everyNthRefusesThoseAllocationsAndNoOthers() {
		this.runner
			.withPropertyValues("gpumem.fault-injection.every-nth=2", "gpumem.device-pool.segments=fixed",
					"gpumem.device-pool.segment-size=256B")
			.run((context) -> {
			StratifiedMemoryPool device = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
			try (PooledBuffer first = device.acquire(4096)) {
				assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> device.acquire(8192));
				try (PooledBuffer third = device.acquire(8192)) {
					assertThat(device.statistics().reservedBytes()).isEqualTo(4096 + 8192);
				}
			}
			FaultInjectingAllocator faults = AllocatorDecorator.find(device.allocator(), FaultInjectingAllocator.class);
			assertThat(faults.injectedFailures()).isEqualTo(1);
			assertThat(device.statistics().inUseBuffers()).isZero();
		});
	}

	@Test
	void aDeviceFaultAfterTenAcquiresFailsTheDeviceForGoodAndBreaksLiveness(CapturedOutput output) {
		this.runner.withConfiguration(AutoConfigurations.of(ApplicationAvailabilityAutoConfiguration.class))
			.withPropertyValues("gpumem.fault-injection.device-fault-after=10")
			.run((context) -> {
				assertThat(output).contains("Device 0 will fail for good at its acquire after 10, as with "
						+ "CUDA_ERROR_ILLEGAL_ADDRESS (700) (gpumem.fault-injection.device-fault-after). This is for tests.");
				StratifiedMemoryPool device = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
				ApplicationAvailability availability = context.getBean(ApplicationAvailability.class);
				for (int i = 0; i < 10; i++) {
					device.acquire(4096).close();
				}
				assertThat(availability.getState(LivenessState.class)).isNull();
				assertThatExceptionOfType(GpuDeviceFailedException.class).isThrownBy(() -> device.acquire(4096))
					.withMessageContaining("CUDA_ERROR_ILLEGAL_ADDRESS (700) in acquire");
				assertThatExceptionOfType(GpuDeviceFailedException.class)
					.isThrownBy(() -> context.getBean("gpumemPinnedPool", StratifiedMemoryPool.class).acquire(1));
				assertThat(availability.getLivenessState()).isEqualTo(LivenessState.BROKEN);
				assertThat(context.getBean(GpuDevice.class).failure()).isPresent();
			});
	}

	@Test
	void badSettingsStopStartupNamingTheProperty() {
		this.runner.withPropertyValues("gpumem.fault-injection.device-fault-after=-1")
			.run((context) -> assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOfSatisfying(InvalidConfigurationPropertyValueException.class,
						(ex) -> assertThat(ex.getName()).isEqualTo("gpumem.fault-injection.device-fault-after")));
		this.runner.withPropertyValues("gpumem.fault-injection.every-nth=0")
			.run((context) -> assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOfSatisfying(InvalidConfigurationPropertyValueException.class,
						(ex) -> assertThat(ex.getName()).isEqualTo("gpumem.fault-injection.every-nth")));
		this.runner.withPropertyValues("gpumem.fault-injection.probability=2")
			.run((context) -> assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("gpumem.fault-injection.probability"));
		this.runner.withPropertyValues("gpumem.fault-injection.every-nth=3", "gpumem.fault-injection.probability=0.5")
			.run((context) -> assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("set every-nth or probability, not both"));
		this.runner.withPropertyValues("gpumem.fault-injection.probability=0.5", "gpumem.fault-injection.pools=devise")
			.run((context) -> assertThat(context.getStartupFailure())
				.hasStackTraceContaining("Failed to bind properties under 'gpumem.fault-injection.pools'")
				.rootCause()
				.hasMessageContaining("devise"));
		this.runner
			.withPropertyValues("gpumem.fault-injection.probability=0.5", "gpumem.fault-injection.pools=reduction")
			.run((context) -> assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOfSatisfying(InvalidConfigurationPropertyValueException.class,
						(ex) -> assertThat(ex.getName()).isEqualTo("gpumem.fault-injection.pools"))
				.hasMessageContaining("the pools that allocate are device, pinned, unified"));
	}

}
