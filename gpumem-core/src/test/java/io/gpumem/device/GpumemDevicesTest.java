package io.gpumem.device;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.allocator.MemoryBudget;
import io.gpumem.backend.BackendType;
import io.gpumem.backend.GpuBackend;
import io.gpumem.buffer.GpuBuffer;
import io.gpumem.config.InvalidSettingException;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.GpuDeviceFailedException;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.pressure.PressureHandler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** Several devices emulated by the host backend: picked by ordinal, by load or by thread, and copied between. */
class GpumemDevicesTest {

	private static final long CAPACITY = 16L << 20;

	private GpumemDevices devices;

	@AfterEach
	void close() {
		if (this.devices != null) {
			this.devices.all().forEach(GpuDevice::close);
		}
	}

	@Test
	void theHostBackendEmulatesSeveralDevicesEachWithItsOwnCapacity() {
		this.devices = open(DeviceSelection.all(), 2);
		assertThat(this.devices.all()).extracting(GpuDevice::ordinal).containsExactly(0, 1);
		assertThat(this.devices.get(1).backend().describe()).isEqualTo("host backend, device 1 (capacity 16.00 MiB)");
		try (GpuBuffer full = this.devices.get(0).devicePool().acquire(CAPACITY)) {
			assertThatExceptionOfType(GpuOutOfMemoryException.class)
				.isThrownBy(() -> this.devices.get(0).devicePool().acquire(1 << 20));
			this.devices.get(1).devicePool().acquire(CAPACITY).close();
		}
		assertThat(this.devices.get(0).backend().memoryInfo().totalBytes()).isEqualTo(CAPACITY);
	}

	@Test
	void aRequestTakesTheLeastLoadedDeviceTiesGoingToTheFirstListed() {
		this.devices = open(DeviceSelection.of(List.of(1, 0)), 2);
		assertThat(this.devices.leastLoaded().ordinal()).isEqualTo(1);
		try (GpuBuffer onPrimary = this.devices.get(1).devicePool().acquire(4 << 20)) {
			assertThat(this.devices.get(1).load()).isEqualTo(0.25);
			assertThat(this.devices.leastLoaded().ordinal()).isEqualTo(0);
			try (GpuBuffer onOther = this.devices.get(0).devicePool().acquire(8 << 20)) {
				assertThat(this.devices.leastLoaded().ordinal()).isEqualTo(1);
			}
		}
	}

	@Test
	void aFailedDeviceIsSkippedAndStopsAloneWhileTheOthersServe() {
		this.devices = open(DeviceSelection.of(List.of(1, 0)), 2);
		GpuDevice failing = this.devices.get(1);
		failing.backend().health().injectFault(0);
		assertThatExceptionOfType(GpuDeviceFailedException.class)
			.isThrownBy(() -> failing.devicePool().acquire(1 << 20))
			.withMessageContaining("device 1 (host memory emulating a device) failed for good with "
					+ "CUDA_ERROR_ILLEGAL_ADDRESS (700) in acquire");
		assertThat(failing.failure()).isPresent();
		assertThat(this.devices.leastLoaded().ordinal()).isZero();
		try (GpuBuffer onOther = this.devices.get(0).devicePool().acquire(8 << 20)) {
			assertThat(this.devices.leastLoaded().ordinal()).as("even the more loaded one").isZero();
			onOther.fill((byte) 1);
		}
		this.devices.get(0).backend().health().injectFault(0);
		assertThatExceptionOfType(GpuDeviceFailedException.class)
			.isThrownBy(() -> this.devices.get(0).devicePool().acquire(1));
		assertThat(this.devices.leastLoaded().ordinal()).as("all failed: the primary, which names its failure")
			.isEqualTo(1);
	}

	@Test
	void aFailedDevicesPressureHandlerStopsChecking() throws InterruptedException {
		HostBackend backend = new HostBackend(CAPACITY);
		StratifiedMemoryPool pool = new StratifiedMemoryPool(backend.allocator(MemoryKind.DEVICE),
				PoolConfig.builder("device").build());
		CompletableFuture<Thread> checker = new CompletableFuture<>();
		PressureHandler pressure = PressureHandler.builder(() -> {
			checker.complete(Thread.currentThread());
			return backend.memoryInfo();
		}).build();
		pressure.register(pool);
		pressure.start(Duration.ofMillis(5));
		GpuDevice device = GpuDevice.builder(backend, pool).pressure(pressure).build();
		try {
			Thread checking = checker.join();
			backend.health().injectFault(0);
			assertThatExceptionOfType(GpuDeviceFailedException.class).isThrownBy(() -> pool.acquire(1));
			checking.join(Duration.ofMinutes(1).toMillis());
			assertThat(checking.isAlive()).as("the handler's thread, ended by the failure").isFalse();
		}
		finally {
			device.close();
		}
	}

	@Test
	void aThreadBoundToADeviceGetsItUntilTheBindingClosesWhileOtherThreadsGetThePrimary() throws Exception {
		this.devices = open(DeviceSelection.all(), 3);
		ExecutorService other = Executors.newSingleThreadExecutor();
		try (GpumemDevices.Binding outer = this.devices.bind(2)) {
			assertThat(this.devices.current().ordinal()).isEqualTo(2);
			try (GpumemDevices.Binding inner = this.devices.bind(1)) {
				assertThat(this.devices.current().ordinal()).isEqualTo(1);
				Future<Integer> elsewhere = other.submit(() -> this.devices.current().ordinal());
				assertThat(elsewhere.get()).isZero();
			}
			assertThat(this.devices.current().ordinal()).isEqualTo(2);
		}
		finally {
			other.shutdown();
		}
		assertThat(this.devices.current()).isSameAs(this.devices.primary());
	}

	@Test
	void anUnknownOrdinalIsRefusedNamingTheDevicesThereAre() {
		this.devices = open(DeviceSelection.of(List.of(0, 2)), 3);
		assertThatIllegalArgumentException().isThrownBy(() -> this.devices.get(1))
			.withMessage("gpumem manages no device 1: its devices are [0, 2]");
		assertThatIllegalArgumentException().isThrownBy(() -> this.devices.bind(5));
		assertThat(this.devices.current().ordinal()).isZero();
	}

	@Test
	void emulatedDevicesCopyBetweenEachOtherDirectly() {
		this.devices = open(DeviceSelection.all(), 2);
		GpuDevice from = this.devices.get(0);
		GpuDevice to = this.devices.get(1);
		double[] values = { 1.5, -2.25, 1e300, Math.PI };
		try (GpuBuffer source = from.devicePool().acquire(8L * values.length);
				GpuBuffer target = to.devicePool().acquire(8L * values.length)) {
			source.copyFrom(values);
			this.devices.copy(from, source, to, target, source.size());
			double[] copied = new double[values.length];
			target.copyTo(copied);
			assertThat(copied).containsExactly(values);
		}
		assertThat(this.devices.copyStatistics()).isEqualTo(new GpumemDevices.CopyStatistics(1, 32, 0, 0));
	}

	@Test
	void theHostBackendEmulatesAsManyDevicesAsTheSelectionLists() {
		this.devices = open(DeviceSelection.of(List.of(3, 1)), 1);
		assertThat(this.devices.all()).extracting(GpuDevice::ordinal).containsExactly(3, 1);
		assertThatExceptionOfType(InvalidSettingException.class)
			.isThrownBy(() -> BackendSelection.selectAll(BackendType.HOST, DeviceSelection.all(), CAPACITY, CAPACITY, 0,
					null))
			.withMessage("host.devices must be 1 or more, not 0");
	}

	@Test
	void devicesListedTwiceAreRefused() {
		GpuBackend backend = new HostBackend(CAPACITY);
		StratifiedMemoryPool pool = pool(backend);
		GpuDevice device = GpuDevice.builder(backend, pool).build();
		assertThatIllegalArgumentException().isThrownBy(() -> new GpumemDevices(List.of(device, device)))
			.withMessage("device 0 is listed twice");
		assertThatIllegalArgumentException().isThrownBy(() -> new GpumemDevices(List.of()));
		device.close();
	}

	private static GpumemDevices open(DeviceSelection selection, int emulated) {
		return new GpumemDevices(BackendSelection.selectAll(BackendType.HOST, selection, CAPACITY, CAPACITY, emulated,
				null)
			.stream()
			.map((selected) -> GpuDevice.builder(selected.backend(), pool(selected.backend()))
				.budget(new MemoryBudget(CAPACITY))
				.build())
			.toList());
	}

	private static StratifiedMemoryPool pool(GpuBackend backend) {
		return new StratifiedMemoryPool(backend.allocator(MemoryKind.DEVICE), PoolConfig.builder("device").build());
	}

}
