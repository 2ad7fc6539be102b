package io.gpumem.cuda;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.gpumem.memory.GpuDeviceFailedException;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.stream.GpuEvent;
import io.gpumem.stream.GpuStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/** The CUDA backend's logic on a fake driver: the shared scenarios, and what only a fake can show. */
class FakeCudaBackendTest extends CudaScenarios {

	private static final long CAPACITY = 64L << 20;

	private FakeCudaDriver driver;

	@Override
	protected CudaBackend openBackend() {
		this.driver = new FakeCudaDriver(CAPACITY);
		this.driver.kernel(DeviceFaultScenario.KERNEL, (launch) -> launch.memory(0).putInt(1 << 30, 1));
		return CudaBackend.open(this.driver, 0);
	}

	@Override
	protected void afterLateCloses() {
		assertThat(this.driver.liveAllocations()).as("allocations left").isZero();
		assertThat(this.driver.retainedContexts()).as("the context, released with the last").isZero();
	}

	@Override
	protected Class<?> devicePointerType() {
		return FakeCudaDriver.FakePointer.class;
	}

	@Override
	protected void whileInFlight(GpuEvent event, PooledBuffer target) {
		assertThat(event.isComplete()).as("the fake runs stream work only when it is waited for").isFalse();
		byte[] notYet = new byte[16];
		target.copyTo(notYet);
		assertThat(notYet).containsOnly((byte) 0);
	}

	@Test
	void aFailedDeviceSendsNothingMoreToItsContextAndClosesWithoutWaiting() throws Exception {
		GpuStream stream = this.backend.createStream();
		PooledBuffer busy = this.device.acquire(1 << 20);
		stream.fill(busy, 0, 1 << 20, (byte) 1);
		busy.closeAfter(stream);
		runDeviceFault();
		CudaDriver raw = this.driver;
		assertThatExceptionOfType(CudaException.class).as("the fake's context is poisoned for every call")
			.isThrownBy(raw::memoryInfo)
			.satisfies((ex) -> assertThat(ex.codeName()).isEqualTo("CUDA_ERROR_ILLEGAL_ADDRESS"));
		int calls = this.driver.totalCalls();
		stream.close();
		this.device.close();
		this.pinned.close();
		this.unified.close();
		this.backend.close();
		assertThat(this.driver.totalCalls()).as("shutdown sent nothing to the dead context").isEqualTo(calls);
		assertThat(this.device.reservedBytes()).isZero();
	}

	@Test
	void aFaultFirstMetByClosingPoolsFailsTheDeviceAndClosingCompletes() {
		GpuStream stream = this.backend.createStream();
		PooledBuffer busy = this.device.acquire(1 << 20);
		CudaModule module = this.backend.loadModule(DeviceFaultScenario.ptx());
		module.kernel(DeviceFaultScenario.KERNEL).launch(stream, 1, 1, busy);
		busy.closeAfter(stream);
		this.device.acquire(4 << 20).close();
		assertThat(this.device.trim(0)).as("the free of a segment meets the fault: the memory goes with the context")
			.isPositive();
		assertThat(this.backend.health().failure()).hasValueSatisfying(
				(failure) -> assertThat(failure.call()).isEqualTo("cuMemFree"));
		this.device.close();
		assertThat(this.device.reservedBytes()).as("the busy block came back, its work never to run").isZero();
		assertThatExceptionOfType(GpuDeviceFailedException.class).isThrownBy(stream::synchronize);
		stream.close();
		module.close();
	}

	@Test
	void aFaultFirstMetByAWaitFailsItAndLaterWaitsRefuseToReportWorkDone() {
		GpuStream stream = this.backend.createStream();
		PooledBuffer target = this.device.acquire(1 << 20);
		CudaModule module = this.backend.loadModule(DeviceFaultScenario.ptx());
		module.kernel(DeviceFaultScenario.KERNEL).launch(stream, 1, 1, target);
		GpuEvent event = stream.record();
		assertThatExceptionOfType(GpuDeviceFailedException.class).isThrownBy(event::await);
		assertThatExceptionOfType(GpuDeviceFailedException.class).as("not complete: the work never ran")
			.isThrownBy(event::isComplete);
		assertThatExceptionOfType(GpuDeviceFailedException.class).isThrownBy(() -> target.closeAfter(stream));
		assertThat(target.isClosed()).as("a buffer that cannot wait for its stream is closed at once").isTrue();
		event.close();
		stream.close();
		module.close();
	}

	@Test
	void everyOperationMakesThePrimaryContextCurrentOnTheCallingThread() throws Exception {
		assertThat(this.driver.retainedContexts()).isEqualTo(1);
		int before = this.driver.calls("cuCtxSetCurrent");
		CompletableFuture.runAsync(() -> {
			try (PooledBuffer buffer = this.device.acquire(1 << 20)) {
				buffer.fill((byte) 1);
			}
		}, (task) -> new Thread(task, "never-touched-cuda").start()).get(30, TimeUnit.SECONDS);
		assertThat(this.driver.calls("cuCtxSetCurrent")).isGreaterThan(before);
		assertThat(this.driver.calls("cuDevicePrimaryCtxRetain")).isEqualTo(1);
	}

	@Test
	void closingTheBackendReleasesThePrimaryContextOnce() {
		this.device.close();
		this.pinned.close();
		this.unified.close();
		this.backend.close();
		this.backend.close();
		assertThat(this.driver.retainedContexts()).isZero();
		assertThatIllegalStateException().isThrownBy(() -> this.backend.memoryInfo()).withMessageContaining("closed");
	}

	@Test
	void anOutOfMemoryRefusalIsFollowedByTrimAndRetry() {
		StratifiedMemoryPool pool = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE),
				PoolConfig.builder("retry").sizeClasses(256L << 10, 4L << 20).build());
		try {
			pool.warm(256L << 10, 8);
			assertThat(pool.statistics().segments().segments()).isEqualTo(1);
			this.driver.refuseNextAllocations(1);
			try (PooledBuffer buffer = pool.acquire(4L << 20)) {
				buffer.fill((byte) 7);
			}
			assertThat(pool.statistics().trimmedBytes()).as("the warmed segment").isEqualTo(2L << 20);
			assertThat(pool.cachedBytes()).as("the new segment, not the warmed one").isEqualTo(4L << 20);
			assertThat(pool.statistics().allocationFailures()).isZero();
		}
		finally {
			pool.close();
		}
		assertThat(this.driver.usedBytes()).isZero();
	}

	@Test
	void withNothingCachedAnOutOfMemoryRefusalIsOurExceptionAndLosesNothing() {
		this.driver.refuseNextAllocations(10);
		assertThatExceptionOfType(GpuOutOfMemoryException.class)
			.isThrownBy(() -> this.device.acquire(1L << 20))
			.satisfies((ex) -> {
				assertThat(ex.diagnostic().kind()).isEqualTo(MemoryKind.DEVICE);
				assertThat(ex.diagnostic().capacityBytes()).isEqualTo(CAPACITY);
				assertThat(ex.diagnostic().freeBytes()).isEqualTo(CAPACITY);
				assertThat(ex.getMessage()).contains("cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2)");
				assertThat(ex).hasRootCauseInstanceOf(CudaException.class);
			});
		assertThat(this.device.statistics().allocationFailures()).isEqualTo(1);
		assertThat(this.device.reservedBytes()).isZero();
		assertThat(this.driver.usedBytes()).isZero();
	}

	@Test
	void otherDriverErrorsCarryTheCallAndTheCodesName() {
		PooledBuffer buffer = this.device.acquire(1L << 20);
		Object pointer = buffer.unwrap(FakeCudaDriver.FakePointer.class);
		CudaDriver raw = this.driver;
		raw.setCurrentContext(null);
		assertThatExceptionOfType(CudaException.class).isThrownBy(() -> raw.freeDevice(pointer))
			.satisfies((ex) -> {
				assertThat(ex.call()).isEqualTo("cuMemFree");
				assertThat(ex.code()).isEqualTo(CudaException.INVALID_CONTEXT);
				assertThat(ex.codeName()).isEqualTo("CUDA_ERROR_INVALID_CONTEXT");
				assertThat(ex.getMessage()).isEqualTo("cuMemFree failed: CUDA_ERROR_INVALID_CONTEXT (201)");
			});
		buffer.close();
	}

	@Test
	void warmingAThousandSmallBuffersTakesOneDriverAllocation() {
		int before = this.driver.calls("cuMemAlloc");
		this.device.warm(256, 1000);
		assertThat(this.driver.calls("cuMemAlloc") - before).isEqualTo(1);
		this.device.trim(0);
		assertThat(this.driver.liveAllocations()).isZero();
		assertThat(this.driver.calls("cuMemFree")).isEqualTo(1);
	}

	@Test
	void carvedBlocksAreAlignedTo256Bytes() {
		try (PooledBuffer a = this.device.acquire(100); PooledBuffer b = this.device.acquire(300)) {
			FakeCudaDriver.FakePointer first = a.unwrap(FakeCudaDriver.FakePointer.class);
			FakeCudaDriver.FakePointer second = b.unwrap(FakeCudaDriver.FakePointer.class);
			assertThat(first.memory()).isSameAs(second.memory());
			assertThat(first.offset() % 256).isZero();
			assertThat(second.offset() % 256).isZero();
			assertThat(Math.abs(second.offset() - first.offset())).isGreaterThanOrEqualTo(256);
		}
	}

	@Test
	void aRequestAboveHalfASegmentGetsASegmentRoundedUpWhoseRestServesOthers() {
		int before = this.driver.calls("cuMemAlloc");
		try (PooledBuffer large = this.device.acquire(3L << 20);
				PooledBuffer rest = this.device.acquire(1L << 20)) {
			FakeCudaDriver.FakePointer pointer = large.unwrap(FakeCudaDriver.FakePointer.class);
			assertThat(pointer.memory().capacity()).as("3 MiB rounded up to 2 MiB steps").isEqualTo(4 << 20);
			assertThat(rest.unwrap(FakeCudaDriver.FakePointer.class).memory()).isSameAs(pointer.memory());
		}
		assertThat(this.driver.calls("cuMemAlloc") - before).isEqualTo(1);
	}

	@Test
	void anEscapedPinnedViewDefersTheFreeUntilItIsUnreachable() throws InterruptedException {
		StratifiedMemoryPool pool = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.PINNED),
				PoolConfig.builder("escape").sizeClasses(4L << 20).build());
		PooledBuffer buffer = pool.acquire(4L << 20);
		ByteBuffer view = buffer.unwrap(ByteBuffer.class);
		buffer.close();
		pool.close();
		assertThat(this.driver.calls("cuMemFreeHost")).isZero();
		view.put(0, (byte) 1);
		view = null;
		await().atMost(Duration.ofMinutes(1)).until(() -> {
			System.gc();
			return this.driver.calls("cuMemFreeHost") > 0;
		});
		assertThat(this.driver.calls("cuMemFreeHost")).isEqualTo(1);
		assertThat(this.driver.liveAllocations()).isZero();
	}

	@Test
	void pinnedMemoryWithNoEscapedViewIsFreedAtOnce() {
		StratifiedMemoryPool pool = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.PINNED),
				PoolConfig.builder("prompt").sizeClasses(4L << 20).build());
		try (PooledBuffer buffer = pool.acquire(4L << 20)) {
			buffer.copyFrom(new long[] { 1, 2, 3 });
		}
		pool.close();
		assertThat(this.driver.calls("cuMemFreeHost")).isEqualTo(1);
	}

	@Test
	void streamsRefuseCopiesTheHardwareCannotDoAsynchronously() {
		try (GpuStream stream = this.backend.createStream();
				PooledBuffer a = this.pinned.acquire(256);
				PooledBuffer b = this.pinned.acquire(256)) {
			assertThatIllegalArgumentException().isThrownBy(() -> stream.copy(a, b)).withMessageContaining("PINNED");
			assertThatExceptionOfType(IndexOutOfBoundsException.class)
				.isThrownBy(() -> stream.copy(a, 0, b, 128, 256));
		}
	}

	@Test
	void aClosedStreamWaitsForItsWorkAndRefusesMore() {
		GpuStream stream = this.backend.createStream();
		try (PooledBuffer staging = this.pinned.acquire(1024); PooledBuffer onDevice = this.device.acquire(1024)) {
			staging.fill((byte) 3);
			stream.copy(staging, onDevice);
			stream.close();
			byte[] back = new byte[1024];
			onDevice.copyTo(back);
			assertThat(back).containsOnly((byte) 3);
			assertThatIllegalStateException().isThrownBy(() -> stream.copy(staging, onDevice));
		}
	}


	@Test
	void aBufferClosedAfterStreamWorkIsNotLentAgainUntilTheWorkCompletes() {
		try (GpuStream stream = this.backend.createStream();
				PooledBuffer staging = this.pinned.acquire(4096)) {
			PooledBuffer target = this.device.acquire(4096);
			staging.fill((byte) 9);
			stream.copy(staging, target);
			FakeCudaDriver.FakePointer busy = target.unwrap(FakeCudaDriver.FakePointer.class);
			target.closeAfter(stream);
			assertThat(target.isClosed()).isTrue();
			try (PooledBuffer other = this.device.acquire(4096)) {
				assertThat(other.unwrap(FakeCudaDriver.FakePointer.class)).isNotEqualTo(busy);
			}
			assertThat(this.device.statistics().inUseBuffers()).as("the busy block stays lent").isEqualTo(1);
			stream.synchronize();
			assertThat(this.device.statistics().inUseBuffers()).as("a statistics read releases nothing").isEqualTo(1);
			try (PooledBuffer first = this.device.acquire(4096); PooledBuffer second = this.device.acquire(4096)) {
				PooledBuffer reused = first.unwrap(FakeCudaDriver.FakePointer.class).equals(busy) ? first : second;
				assertThat(reused.unwrap(FakeCudaDriver.FakePointer.class)).isEqualTo(busy);
				byte[] landed = new byte[4096];
				reused.copyTo(landed);
				assertThat(landed).as("the copy completed before the block was lent again").containsOnly((byte) 9);
			}
			assertThat(this.device.statistics().misses()).as("one segment served every other acquire")
				.isEqualTo(1);
			assertThat(this.device.statistics().inUseBuffers()).isZero();
		}
	}

	@Test
	void closingAPoolWaitsForBuffersReleasedAfterAStream() {
		GpuStream stream = this.backend.createStream();
		PooledBuffer target = this.device.acquire(1 << 20);
		stream.fill(target, 0, 1 << 20, (byte) 1);
		target.closeAfter(stream);
		this.device.close();
		assertThat(this.device.reservedBytes()).isZero();
		assertThat(this.driver.calls("cuEventSynchronize")).isPositive();
		stream.close();
	}

}
