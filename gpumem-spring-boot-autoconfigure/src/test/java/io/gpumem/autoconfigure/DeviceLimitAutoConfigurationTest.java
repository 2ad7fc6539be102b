package io.gpumem.autoconfigure;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.gpumem.allocator.MemoryBudget;
import io.gpumem.autoconfigure.metrics.GpumemMetricsAutoConfiguration;
import io.gpumem.cuda.CudaDriver;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.device.GpuDevice;
import io.gpumem.device.GpumemDevices;
import io.gpumem.limit.DeviceLimit;
import io.gpumem.limit.DeviceLimits;
import io.gpumem.limit.InvalidLimitException;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.pressure.PressureHandler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The device's limit where GPU sharing sets one: read once per device, logged with its source, the budget a fraction
 * of it, shown as a meter, and a malformed value stopping startup.
 */
@ExtendWith(OutputCaptureExtension.class)
class DeviceLimitAutoConfigurationTest {

	private static final long MIB = 1L << 20;

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(GpumemAutoConfiguration.class, GpumemMetricsAutoConfiguration.class))
		.withPropertyValues("gpumem.backend=host", "gpumem.host.capacity=1GB", "gpumem.memory-fraction=0.8");

	@TempDir
	Path cgroupRoot;

	@Test
	void withoutGpuSharingTheCardIsTheLimit() {
		this.runner.run((context) -> {
			DeviceLimit limit = context.getBean(DeviceLimit.class);
			assertThat(limit.limitBytes()).isEqualTo(1L << 30);
			assertThat(limit.source()).isEqualTo("the card");
			assertThat(context.getBean(MemoryBudget.class).limitBytes()).isEqualTo((long) Math.floor((1L << 30) * 0.8));
			assertThat(context.getBean(GpumemDevices.class).primary().limit()).containsSame(limit);
		});
	}

	@Test
	void hamisLimitIsTheDevicesLimitLoggedOnceWithItsSourceAndTheBudget(CapturedOutput output) {
		this.runner.withPropertyValues("CUDA_DEVICE_MEMORY_LIMIT_0=300m").run((context) -> {
			DeviceLimit limit = context.getBean(DeviceLimit.class);
			assertThat(limit.limitBytes()).isEqualTo(314572800L);
			assertThat(limit.source()).isEqualTo("CUDA_DEVICE_MEMORY_LIMIT_0 (HAMi)");
			assertThat(context.getBean(MemoryBudget.class).limitBytes()).isEqualTo(251658240L);
			assertThat(output).containsOnlyOnce("Device 0: limit 300.00 MiB from CUDA_DEVICE_MEMORY_LIMIT_0 (HAMi; "
					+ "the card has 1.00 GiB); memory-fraction 0.8: budget 240.00 MiB");
			SimpleMeterRegistry registry = new SimpleMeterRegistry();
			context.getBeansOfType(MeterBinder.class).values().forEach((binder) -> binder.bindTo(registry));
			assertThat(registry.get("gpumem.device.limit").tags("device", "0", "source", limit.source()).gauge().value())
				.isEqualTo(314572800.0);
		});
	}

	@Test
	void aRequestBeyondTheLimitsBudgetIsRefusedAtOnceNamingTheLimitAndItsSource() {
		this.runner.withPropertyValues("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=200M", "CUDA_DEVICE_MEMORY_LIMIT_0=300m")
			.run((context) -> {
				StratifiedMemoryPool pool = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
				assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> pool.acquire(161 * MIB))
					.withMessageContaining("Its limit is 160.00 MiB")
					.withMessageContaining("larger than the budget, refused at once; the budget is memory-fraction 0.8 "
							+ "of the limit of 200.00 MiB from CUDA_MPS_PINNED_DEVICE_MEM_LIMIT (MPS)");
				assertThat(context.getBean(MemoryBudget.class).usedBytes()).as("nothing was tried on the device").isZero();
				try (PooledBuffer fits = pool.acquire(150 * MIB)) {
					assertThat(fits.size()).isGreaterThanOrEqualTo(150 * MIB);
				}
			});
	}

	@Test
	void pressureWeighsWhatGpumemHoldsAgainstASharedLimit() {
		this.runner.withPropertyValues("CUDA_DEVICE_MEMORY_LIMIT_0=100m", "gpumem.memory-fraction=1")
			.run((context) -> {
				StratifiedMemoryPool pool = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
				PressureHandler pressure = context.getBean(PressureHandler.class);
				try (PooledBuffer held = pool.acquire(50 * MIB)) {
					pressure.check();
					assertThat(pressure.utilization(PressureHandler.Memory.DEVICE))
						.as("what the pool reserved over 100 MiB, not over the card's 1 GiB")
						.isEqualTo((double) pool.reservedBytes() / (100 * MIB))
						.isGreaterThanOrEqualTo(0.5);
				}
			});
	}

	@Test
	void everyDeviceReadsItsOwnLimit() {
		this.runner
			.withPropertyValues("gpumem.host.devices=2", "gpumem.devices=all", "CUDA_DEVICE_MEMORY_LIMIT_1=200m",
					"CUDA_DEVICE_MEMORY_LIMIT=400m")
			.run((context) -> {
				GpumemDevices devices = context.getBean(GpumemDevices.class);
				assertThat(devices.primary().limit().orElseThrow().limitBytes()).isEqualTo(400 * MIB);
				GpuDevice second = devices.get(1);
				assertThat(second.limit().orElseThrow().limitBytes()).isEqualTo(200 * MIB);
				assertThat(second.limit().orElseThrow().source()).isEqualTo("CUDA_DEVICE_MEMORY_LIMIT_1 (HAMi)");
				assertThat(second.budget().orElseThrow().limitBytes()).isEqualTo(160 * MIB);
			});
	}

	@Test
	void theCgroupADeviceLimitsBeanReadsIsTheOneUsed() throws IOException {
		Path self = this.cgroupRoot.resolve("self");
		Files.writeString(self, "0::/pod\n");
		Files.createDirectories(this.cgroupRoot.resolve("pod"));
		Files.writeString(this.cgroupRoot.resolve("pod/dmem.max"), "region 209715200\n");
		this.runner.withBean(DeviceLimits.class, () -> new DeviceLimits((name) -> null, this.cgroupRoot, self))
			.run((context) -> {
				DeviceLimit limit = context.getBean(DeviceLimit.class);
				assertThat(limit.limitBytes()).isEqualTo(200 * MIB);
				assertThat(limit.source()).isEqualTo("dmem.max of cgroup /pod (region) (cgroup dmem)");
			});
	}

	@Test
	void onCudaWhereTheDriverReportsTheShareWhatItShowsInUseIsLeftOutOfTheBudget() {
		// HAMi's hook answers cuMemGetInfo with the limit as the total; 50 MiB are in use before gpumem starts
		FakeCudaDriver hooked = new FakeCudaDriver(300 * MIB);
		hooked.init();
		hooked.setCurrentContext(hooked.retainPrimaryContext(0));
		hooked.allocateDevice(50 * MIB);
		this.runner.withBean(CudaDriver.class, () -> hooked)
			.withPropertyValues("gpumem.backend=cuda", "CUDA_DEVICE_MEMORY_LIMIT_0=300m")
			.run((context) -> {
				DeviceLimit limit = context.getBean(DeviceLimit.class);
				assertThat(limit.source()).isEqualTo("CUDA_DEVICE_MEMORY_LIMIT_0 (HAMi)");
				assertThat(limit.contextBytes()).isEqualTo(50 * MIB);
				assertThat(context.getBean(MemoryBudget.class).limitBytes())
					.isEqualTo((long) Math.floor(300 * MIB * 0.8) - 50 * MIB);
			});
	}

	@Test
	void onCudaTheCgroupRegionOfTheDevicesBusIdIsTheOneRead() throws IOException {
		Path self = this.cgroupRoot.resolve("self");
		Files.writeString(self, "0::/pod\n");
		Files.createDirectories(this.cgroupRoot.resolve("pod"));
		Files.writeString(this.cgroupRoot.resolve("pod/dmem.max"),
				"nvidia/00000000:01:00.0/vidmem 104857600\nnvidia/00000000:02:00.0/vidmem 52428800\n");
		this.runner.withBean(CudaDriver.class, () -> new FakeCudaDriver(1L << 30).devices(2))
			.withBean(DeviceLimits.class, () -> new DeviceLimits((name) -> null, this.cgroupRoot, self))
			.withPropertyValues("gpumem.backend=cuda", "gpumem.devices=all", "gpumem.pinned-pool.enabled=false")
			.run((context) -> {
				GpumemDevices devices = context.getBean(GpumemDevices.class);
				assertThat(devices.get(0).limit().orElseThrow().limitBytes()).isEqualTo(100 * MIB);
				assertThat(devices.get(1).limit().orElseThrow().limitBytes()).isEqualTo(50 * MIB);
				assertThat(devices.get(1).limit().orElseThrow().source())
					.isEqualTo("dmem.max of cgroup /pod (nvidia/00000000:02:00.0/vidmem) (cgroup dmem)");
			});
	}

	@Test
	void aMalformedValueStopsStartupNamingTheVariable() {
		this.runner.withPropertyValues("CUDA_DEVICE_MEMORY_LIMIT_0=lots").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(InvalidLimitException.class)
				.hasMessageContaining("CUDA_DEVICE_MEMORY_LIMIT_0 is 'lots'");
		});
	}

}
