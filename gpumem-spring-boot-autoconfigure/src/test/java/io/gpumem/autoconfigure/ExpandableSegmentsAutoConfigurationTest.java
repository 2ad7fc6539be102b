package io.gpumem.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.gpumem.cuda.CudaDriver;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code gpumem.device-pool.segments}: expandable segments where the device maps memory into reserved address
 * ranges, fixed ones where it cannot or where asked.
 */
@ExtendWith(OutputCaptureExtension.class)
class ExpandableSegmentsAutoConfigurationTest {

	private static final long CAPACITY = 64L << 20;

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(GpumemAutoConfiguration.class))
		.withPropertyValues("gpumem.backend=host", "gpumem.host.capacity=64MB", "gpumem.pressure.enabled=false");

	@Test
	void theHostBackendsDevicePoolGrowsExpandableSegmentsByDefault() {
		this.runner.run((context) -> {
			StratifiedMemoryPool pool = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
			assertThat(pool.allocator().addressSpace()).isNotNull();
			try (PooledBuffer buffer = pool.acquire(3L << 20)) {
				assertThat(pool.reservedBytes()).as("its step mapped").isEqualTo(4L << 20);
			}
			pool.trim(0);
			assertThat(pool.reservedBytes()).isZero();
		});
	}

	@Test
	void theMappingStepSetsWhatARequestMapsAhead() {
		this.runner.withPropertyValues("gpumem.device-pool.mapping-step=8MB").run((context) -> {
			StratifiedMemoryPool pool = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
			assertThat(pool.config().mappingStepBytes()).isEqualTo(8L << 20);
			try (PooledBuffer buffer = pool.acquire(3L << 20)) {
				assertThat(pool.reservedBytes()).as("the rest of its step mapped too").isEqualTo(8L << 20);
			}
		});
	}

	@Test
	void fixedCutsSegmentAllocations() {
		this.runner.withPropertyValues("gpumem.device-pool.segments=fixed").run((context) -> {
			StratifiedMemoryPool pool = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
			assertThat(pool.allocator().addressSpace()).isNull();
		});
	}

	@Test
	void aCudaDeviceWithVirtualMemoryGrowsExpandableSegments() {
		FakeCudaDriver driver = new FakeCudaDriver(CAPACITY);
		this.runner.withBean(CudaDriver.class, () -> driver).withPropertyValues("gpumem.backend=cuda")
			.run((context) -> {
				StratifiedMemoryPool pool = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
				assertThat(pool.allocator().addressSpace()).isNotNull();
				try (PooledBuffer buffer = pool.acquire(3L << 20)) {
					assertThat(driver.usedBytes(0)).isEqualTo(pool.reservedBytes()).isEqualTo(4L << 20);
				}
			});
		assertThat(driver.usedBytes(0)).isZero();
		assertThat(driver.retainedContexts()).isZero();
	}

	@Test
	void autoOnADeviceWithoutVirtualMemoryCutsFixedSegmentsAndSaysWhyInOneLine(CapturedOutput output) {
		FakeCudaDriver driver = new FakeCudaDriver(CAPACITY).withoutVirtualMemory();
		this.runner.withBean(CudaDriver.class, () -> driver).withPropertyValues("gpumem.backend=cuda")
			.run((context) -> {
				StratifiedMemoryPool pool = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
				assertThat(pool.allocator().addressSpace()).isNull();
			});
		assertThat(output).containsOnlyOnce("cuts fixed segments")
			.contains("does not report virtual memory management");
	}

	@Test
	void expandableOnADeviceWithoutVirtualMemoryStopsStartupNamingTheProperty() {
		FakeCudaDriver driver = new FakeCudaDriver(CAPACITY).withoutVirtualMemory();
		this.runner.withBean(CudaDriver.class, () -> driver)
			.withPropertyValues("gpumem.backend=cuda", "gpumem.device-pool.segments=expandable")
			.run((context) -> assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOfSatisfying(InvalidConfigurationPropertyValueException.class, (ex) -> {
					assertThat(ex.getName()).isEqualTo("gpumem.device-pool.segments");
					assertThat(ex.getReason()).contains("cuda device 0", "virtual memory management",
							"Set it to auto or fixed");
				}));
		assertThat(driver.retainedContexts()).isZero();
	}

}
