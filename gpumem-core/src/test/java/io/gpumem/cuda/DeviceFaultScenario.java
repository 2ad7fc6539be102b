package io.gpumem.cuda;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

import io.gpumem.memory.DeviceFailure;
import io.gpumem.memory.GpuDeviceFailedException;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.stream.GpuStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A kernel writes out of bounds: the device fails for good, once, with the first error, and every part refuses
 * work naming it, while closing everything still completes. It leaves a real device unusable for the rest of the
 * process, so on a real driver it runs in a JVM of its own ({@link #main}).
 */
final class DeviceFaultScenario {

	static final String KERNEL = "write_out_of_bounds";

	private DeviceFaultScenario() {
	}

	/** The scenario over {@code backend} and its device and pinned pools, which the caller closes afterwards. */
	static void run(CudaBackend backend, StratifiedMemoryPool device, StratifiedMemoryPool pinned) {
		AtomicInteger told = new AtomicInteger();
		backend.health().onFailure((failure) -> told.incrementAndGet());
		PooledBuffer lent = device.acquire(1 << 20);
		lent.fill((byte) 1);
		pinned.acquire(4096).close();
		CudaModule module = backend.loadModule(ptx());
		GpuStream stream = backend.createStream();
		module.kernel(KERNEL).launch(stream, 1, 1, lent);
		assertThatExceptionOfType(GpuDeviceFailedException.class).isThrownBy(stream::synchronize)
			.satisfies((ex) -> assertThat(ex).hasCauseInstanceOf(CudaException.class));
		DeviceFailure failure = backend.health().failure().orElseThrow();
		assertThat(failure.error()).as("a write to unmapped memory").contains("CUDA_ERROR_ILLEGAL_ADDRESS");
		assertThat(failure.device()).isEqualTo(backend.deviceId());
		assertThat(failure.thread()).isEqualTo(Thread.currentThread().getName());
		for (Runnable call : new Runnable[] { () -> device.acquire(1 << 20), () -> device.acquire(256),
				() -> pinned.acquire(4096), () -> device.warm(256, 1), () -> lent.copyFrom(new byte[16]),
				() -> stream.fill(lent, 0, 16, (byte) 2), backend::memoryInfo, backend::createStream,
				() -> module.kernel(KERNEL).launch(stream, 1, 1, lent) }) {
			assertThatExceptionOfType(GpuDeviceFailedException.class).isThrownBy(call::run)
				.satisfies((ex) -> assertThat(ex.failure()).isEqualTo(failure))
				.withMessageContaining("failed for good with " + failure.error())
				.withMessageContaining("process must be restarted");
		}
		lent.close();
		assertThatExceptionOfType(GpuDeviceFailedException.class).isThrownBy(() -> device.acquire(1 << 20));
		assertThat(device.trim(0)).as("its blocks go nowhere but away").isPositive();
		assertThat(device.statistics().inUseBuffers()).isZero();
		stream.close();
		module.close();
		assertThat(told).as("the failure is heard once").hasValue(1);
	}

	/** The scenario on device 0 of the real driver, exiting 0 when it passes. */
	public static void main(String[] arguments) {
		CudaBackend backend = CudaBackend.open(0);
		StratifiedMemoryPool device = new StratifiedMemoryPool(backend.allocator(MemoryKind.DEVICE),
				PoolConfig.builder("device").build());
		StratifiedMemoryPool pinned = new StratifiedMemoryPool(backend.allocator(MemoryKind.PINNED),
				PoolConfig.builder("pinned").build());
		run(backend, device, pinned);
		device.close();
		pinned.close();
		backend.close();
		System.out.println("device fault scenario passed: " + backend.health().failure().orElseThrow().describe());
	}

	/** The scenario on device 0 of the driver {@code jvm} loads, in that JVM, which must end saying it passed. */
	static void runInJvmOfItsOwn(JvmOfItsOwn jvm) throws Exception {
		JvmOfItsOwn.Ended ended = jvm.run(DeviceFaultScenario.class);
		assertThat(ended.exitCode()).as(ended.output()).isZero();
		assertThat(ended.output()).contains("device fault scenario passed");
	}

	/** The PTX of the {@value #KERNEL} kernel, NUL-terminated. */
	static byte[] ptx() {
		try (InputStream in = DeviceFaultScenario.class.getResourceAsStream("/kernels/fault.ptx")) {
			byte[] ptx = in.readAllBytes();
			return Arrays.copyOf(ptx, ptx.length + 1);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
