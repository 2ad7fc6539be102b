package io.gpumem.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.cuda.CudaDriver;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.device.GpuDevice;
import io.gpumem.device.GpumemDevices;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** {@code gpumem.device-pool.allocator}: the arena by default, CUDA's stream-ordered pool on request. */
class StreamOrderedPoolAutoConfigurationTest {

	private static final long CAPACITY = 64L << 20;

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(GpumemAutoConfiguration.class))
		.withPropertyValues("gpumem.backend=host", "gpumem.host.capacity=64MB", "gpumem.pressure.enabled=false");

	@Test
	void theDevicePoolCutsSegmentsOfTheArenaByDefault() {
		this.runner.run((context) -> {
			StratifiedMemoryPool pool = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
			assertThat(pool.allocator().streamOrdered()).isFalse();
			try (PooledBuffer one = pool.acquire(4096); PooledBuffer two = pool.acquire(4096)) {
				assertThat(pool.statistics().segments().segments()).as("both cut from one 2 MiB segment").isEqualTo(1);
			}
		});
	}

	@Test
	void cudaAsyncOnTheHostBackendEmulatesABlockPerBuffer() {
		this.runner.withPropertyValues("gpumem.device-pool.allocator=cuda-async").run((context) -> {
			StratifiedMemoryPool pool = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
			assertThat(pool.allocator().streamOrdered()).isTrue();
			try (PooledBuffer one = pool.acquire(4096); PooledBuffer two = pool.acquire(4096)) {
				assertThat(pool.statistics().segments().segments()).isEqualTo(2);
				assertThat(pool.reservedBytes()).isEqualTo(8192);
			}
		});
	}

	@Test
	void cudaAsyncDrawsEveryDeviceFromCudasPoolWithinItsBudget() {
		FakeCudaDriver driver = new FakeCudaDriver(CAPACITY).devices(2);
		this.runner.withBean(CudaDriver.class, () -> driver)
			.withPropertyValues("gpumem.backend=cuda", "gpumem.devices=all", "gpumem.memory-fraction=0.5",
					"gpumem.device-pool.allocator=cuda-async", "gpumem.unified-pool.enabled=false")
			.run((context) -> {
				GpumemDevices devices = context.getBean(GpumemDevices.class);
				for (GpuDevice device : devices.all()) {
					StratifiedMemoryPool pool = (StratifiedMemoryPool) device.devicePool();
					assertThat(pool.allocator().streamOrdered()).isTrue();
					try (GpuBuffer lent = pool.acquire(8L << 20)) {
						assertThat(driver.usedBytes(device.ordinal())).isEqualTo(pool.reservedBytes());
					}
					assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> pool.acquire(40L << 20))
						.withMessageContaining("limit");
				}
				assertThat(driver.calls("cuMemAllocFromPoolAsync")).isEqualTo(2);
				assertThat(driver.calls("cuMemPoolCreate")).isEqualTo(2);
				assertThat(driver.calls("cuMemAlloc")).isZero();
			});
		assertThat(driver.calls("cuMemPoolDestroy")).as("each device's pool destroyed at close").isEqualTo(2);
		assertThat(driver.usedBytes(0) + driver.usedBytes(1)).isZero();
		assertThat(driver.retainedContexts()).isZero();
	}

	@Test
	void aDeviceWithoutMemoryPoolsStopsStartupNamingTheAllocator() {
		FakeCudaDriver driver = new FakeCudaDriver(CAPACITY).withoutMemoryPools();
		this.runner.withBean(CudaDriver.class, () -> driver)
			.withPropertyValues("gpumem.backend=cuda", "gpumem.device-pool.allocator=cuda-async")
			.run((context) -> assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOfSatisfying(InvalidConfigurationPropertyValueException.class, (ex) -> {
					assertThat(ex.getName()).isEqualTo("gpumem.device-pool.allocator");
					assertThat(ex.getReason()).contains("stream-ordered pool of cuda device 0", "CUDA_ERROR_NOT_SUPPORTED");
				}));
		assertThat(driver.retainedContexts()).isZero();
	}

}
