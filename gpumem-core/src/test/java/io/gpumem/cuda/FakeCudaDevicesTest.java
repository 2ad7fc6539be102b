package io.gpumem.cuda;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.backend.BackendType;
import io.gpumem.buffer.GpuBuffer;
import io.gpumem.config.InvalidSettingException;
import io.gpumem.device.BackendSelection;
import io.gpumem.device.DeviceSelection;
import io.gpumem.device.GpuDevice;
import io.gpumem.device.GpumemDevices;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.stream.GpuStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** Several CUDA devices on the fake driver: a context, a capacity and pools per device, and copies between them. */
class FakeCudaDevicesTest {

	private static final long CAPACITY = 32L << 20;

	private GpumemDevices devices;

	@AfterEach
	void close() {
		if (this.devices != null) {
			this.devices.all().forEach(GpuDevice::close);
		}
	}

	@Test
	void everyDeviceHasItsOwnContextCapacityAndPools() {
		FakeCudaDriver driver = new FakeCudaDriver(CAPACITY).devices(3);
		this.devices = open(driver, DeviceSelection.all());
		assertThat(this.devices.all()).extracting(GpuDevice::ordinal).containsExactly(0, 1, 2);
		assertThat(driver.retainedContexts()).isEqualTo(3);

		GpuDevice second = this.devices.get(1);
		GpuBuffer filling = second.devicePool().acquire(CAPACITY);
		assertThatExceptionOfType(GpuOutOfMemoryException.class)
			.isThrownBy(() -> second.devicePool().acquire(1 << 20).close());
		try (GpuBuffer first = this.devices.get(0).devicePool().acquire(CAPACITY);
				GpuBuffer third = this.devices.get(2).devicePool().acquire(CAPACITY)) {
			assertThat(driver.usedBytes(0)).isEqualTo(CAPACITY);
			assertThat(driver.usedBytes(2)).isEqualTo(CAPACITY);
		}
		assertThat(this.devices.get(0).devicePool().trim(0)).isEqualTo(CAPACITY);
		assertThat(this.devices.get(0).backend().memoryInfo().freeBytes()).isEqualTo(CAPACITY);
		assertThat(second.backend().memoryInfo().freeBytes()).isZero();
		assertThat(driver.usedBytes(1)).isEqualTo(CAPACITY);
		filling.close();
	}

	@Test
	void aStreamFillsOnlyItsOwnDevicesMemory() {
		FakeCudaDriver driver = new FakeCudaDriver(CAPACITY).devices(2);
		this.devices = open(driver, DeviceSelection.all());
		try (GpuBuffer onSecond = this.devices.get(1).devicePool().acquire(1024);
				GpuStream firstStream = this.devices.get(0).backend().createStream()) {
			assertThatExceptionOfType(IllegalArgumentException.class)
				.isThrownBy(() -> firstStream.fill(onSecond, 0, 1024, (byte) 1))
				.withMessageContaining("belongs to device 1, not to this stream's device 0");
		}
	}

	@Test
	void copiesBetweenDevicesThatReachEachOtherGoPeerToPeer() {
		FakeCudaDriver driver = new FakeCudaDriver(CAPACITY).devices(2);
		this.devices = open(driver, DeviceSelection.all());
		GpuDevice first = this.devices.get(0);
		GpuDevice second = this.devices.get(1);
		int[] values = sequence(1 << 20);
		try (GpuBuffer source = first.devicePool().acquire(4L * values.length);
				GpuBuffer target = second.devicePool().acquire(4L * values.length)) {
			source.copyFrom(values);
			this.devices.copy(first, source, second, target, source.size());
			this.devices.copy(first, source, second, target, source.size());
			int[] copied = new int[values.length];
			target.copyTo(copied);
			assertThat(copied).isEqualTo(values);
		}
		assertThat(this.devices.peerAccess(first, second)).isTrue();
		assertThat(driver.calls("cuCtxEnablePeerAccess")).as("enabled once, both ways").isEqualTo(2);
		assertThat(driver.calls("cuMemcpyPeerAsync")).isEqualTo(2);
		assertThat(driver.calls("cuMemcpyDtoHAsync")).isZero();
		assertThat(this.devices.copyStatistics()).isEqualTo(new GpumemDevices.CopyStatistics(2, 8L << 20, 0, 0));
	}

	@Test
	void copiesBetweenDevicesThatCannotReachEachOtherAreStagedThroughPinnedMemory() {
		FakeCudaDriver driver = new FakeCudaDriver(CAPACITY).devices(2).withoutPeerAccess();
		this.devices = open(driver, DeviceSelection.of(List.of(1, 0)));
		GpuDevice first = this.devices.get(1);
		GpuDevice second = this.devices.get(0);
		int[] values = sequence(5 << 18);
		try (GpuBuffer source = first.devicePool().acquire(4L * values.length);
				GpuBuffer target = second.devicePool().acquire(4L * values.length)) {
			source.copyFrom(values);
			int downloads = driver.calls("cuMemcpyDtoHAsync");
			int uploads = driver.calls("cuMemcpyHtoDAsync");
			this.devices.copy(first, source, second, target, source.size());
			assertThat(driver.calls("cuMemcpyDtoHAsync") - downloads).as("5 MiB in 4 MiB steps").isEqualTo(2);
			assertThat(driver.calls("cuMemcpyHtoDAsync") - uploads).isEqualTo(2);
			int[] copied = new int[values.length];
			target.copyTo(copied);
			assertThat(copied).isEqualTo(values);
		}
		assertThat(this.devices.primary().ordinal()).isEqualTo(1);
		assertThat(this.devices.peerAccess(first, second)).isFalse();
		assertThat(driver.calls("cuMemcpyPeerAsync")).isZero();
		assertThat(this.devices.copyStatistics()).isEqualTo(new GpumemDevices.CopyStatistics(0, 0, 1, 5L << 20));
		MemoryPool staging = first.pinnedPool().orElseThrow();
		assertThat(staging.statistics().requests()).isEqualTo(1);
		assertThat(staging.usedBytes()).isZero();
	}

	@Test
	void aSelectedDeviceTheDriverDoesNotHaveIsRefusedByItsPlaceInTheList() {
		FakeCudaDriver driver = new FakeCudaDriver(CAPACITY).devices(2);
		assertThatExceptionOfType(InvalidSettingException.class)
			.isThrownBy(() -> BackendSelection.selectAll(BackendType.CUDA, DeviceSelection.of(List.of(0, 2)), CAPACITY,
					CAPACITY, 1, () -> driver))
			.satisfies((ex) -> assertThat(ex.setting()).isEqualTo("devices[1]"))
			.withMessageContaining("the CUDA driver found 2 device(s)");
		assertThat(driver.retainedContexts()).as("refused before any device is opened").isZero();
	}

	@Test
	void aDeviceThatFailsToOpenReleasesTheDevicesOpenedBeforeIt() {
		FakeCudaDriver driver = new FakeCudaDriver(CAPACITY).devices(3);
		CudaDriver failingOnTheThird = (CudaDriver) Proxy.newProxyInstance(CudaDriver.class.getClassLoader(),
				new Class<?>[] { CudaDriver.class }, (proxy, method, args) -> {
					if (method.getName().equals("deviceName") && (int) args[0] == 2) {
						throw new CudaException("cuDeviceGetName", 101, "CUDA_ERROR_INVALID_DEVICE");
					}
					try {
						return method.invoke(driver, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
				});
		assertThatExceptionOfType(CudaException.class)
			.isThrownBy(() -> BackendSelection.selectAll(BackendType.CUDA, DeviceSelection.of(List.of(0, 1, 2)),
					CAPACITY, CAPACITY, 1, () -> failingOnTheThird))
			.withMessageContaining("CUDA_ERROR_INVALID_DEVICE");
		assertThat(driver.retainedContexts()).as("the two devices opened before are released").isZero();
	}

	private static GpumemDevices open(FakeCudaDriver driver, DeviceSelection selection) {
		return new GpumemDevices(BackendSelection.selectAll(BackendType.CUDA, selection, CAPACITY, CAPACITY, 1,
				() -> driver)
			.stream()
			.map((selected) -> GpuDevice
				.builder(selected.backend(),
						new StratifiedMemoryPool(selected.backend().allocator(MemoryKind.DEVICE),
								PoolConfig.builder("device").build()))
				.pinnedPool(new StratifiedMemoryPool(selected.backend().allocator(MemoryKind.PINNED),
						PoolConfig.builder("pinned").build()))
				.build())
			.toList());
	}

	private static int[] sequence(int length) {
		int[] values = new int[length];
		for (int i = 0; i < length; i++) {
			values[i] = i * 31 + 7;
		}
		return values;
	}

}
