package io.gpumem.cuda;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PoolStatistics;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.stream.GpuStream;
import io.gpumem.stream.StreamOrder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * CUDA's stream-ordered pool ({@link CudaAsyncAllocator}) on the fake driver, whose pool follows CUDA's
 * rules: reuse in stream order, and everything unused released at every synchronization (threshold 0).
 */
class CudaAsyncAllocatorTest {

	private static final long CAPACITY = 64L << 20;

	private final FakeCudaDriver driver = new FakeCudaDriver(CAPACITY).devices(2);

	private final CudaBackend backend = CudaBackend.open(this.driver, 0);

	private final CudaAsyncAllocator allocator = (CudaAsyncAllocator) this.backend.streamOrderedAllocator();

	@AfterEach
	void close() {
		this.backend.close();
	}

	@Test
	void theDriversPoolGivesBackWhatIsFreeAtEverySynchronization() {
		this.backend.makeContextCurrent();
		Object pool = this.driver.createMemoryPool(0);
		Object first = this.driver.createStream();
		Object second = this.driver.createStream();
		Object block = this.driver.allocateFromPool(pool, 1 << 20, first);
		this.driver.freeAsync(block, first);

		this.driver.allocateFromPool(pool, 1 << 20, second);
		assertThat(this.driver.poolReservations()).as("a free not yet run serves only its own stream").isEqualTo(2);
		Object reused = this.driver.allocateFromPool(pool, 1 << 20, first);
		assertThat(this.driver.poolReservations()).isEqualTo(2);

		this.driver.freeAsync(reused, first);
		assertThat(this.driver.poolFreeBytes()).isEqualTo(1 << 20);
		this.driver.synchronizeStream(second);
		assertThat(this.driver.poolFreeBytes()).as("its free has not run").isEqualTo(1 << 20);
		this.driver.synchronizeStream(first);
		assertThat(this.driver.poolFreeBytes()).as("released at the synchronization, threshold 0").isZero();
		assertThat(this.driver.usedBytes(0)).isEqualTo(1 << 20);
		this.driver.destroyMemoryPool(pool);
	}

	@Test
	void aBlockAllocatedWithNoStreamBoundIsReadyForEveryStream() {
		int synchronizations = this.driver.calls("cuStreamSynchronize");
		Allocation block = this.allocator.allocate(1 << 20);
		assertThat(this.driver.calls("cuMemAllocFromPoolAsync")).isEqualTo(1);
		assertThat(this.driver.calls("cuStreamSynchronize")).isEqualTo(synchronizations + 1);
		assertThat(this.driver.calls("cuMemAlloc")).isZero();
		assertThat(this.allocator.allocatedBytes()).isEqualTo(1 << 20);
		assertThat(this.driver.usedBytes(0)).isEqualTo(1 << 20);
		assertThat(this.allocator.streamOrderedAllocations()).isZero();

		int[] values = { 7, 11, 13 };
		block.copyFromHost(0, values, 0, 3, ElementType.INT);
		int[] read = new int[3];
		block.copyToHost(0, read, 0, 3, ElementType.INT);
		assertThat(read).containsExactly(7, 11, 13);
		this.allocator.free(block);
	}

	@Test
	void aBlockAllocatedWithAStreamBoundIsOrderedOnItWithNoWait() {
		try (GpuStream stream = this.backend.createStream();
				StreamOrder.Binding ordered = StreamOrder.bind(stream)) {
			int synchronizations = this.driver.calls("cuStreamSynchronize");
			Allocation block = this.allocator.allocate(4096);
			assertThat(this.driver.calls("cuStreamSynchronize")).isEqualTo(synchronizations);
			assertThat(this.allocator.streamOrderedAllocations()).isEqualTo(1);
			stream.synchronize();
			this.allocator.free(block);
		}
		assertThat(StreamOrder.current()).isNull();
	}

	@Test
	void aStreamOfAnotherDeviceOrdersNothing() {
		try (CudaBackend other = CudaBackend.open(this.driver, 1);
				GpuStream stream = other.createStream();
				StreamOrder.Binding ordered = StreamOrder.bind(stream)) {
			Allocation block = this.allocator.allocate(4096);
			assertThat(this.allocator.streamOrderedAllocations()).isZero();
			assertThat(this.driver.usedBytes(0)).isEqualTo(4096);
			assertThat(this.driver.usedBytes(1)).isZero();
			this.allocator.free(block);
		}
	}

	@Test
	void aFreeGivesTheMemoryBackToTheDeviceWithoutSynchronizingIt() {
		Allocation block = this.allocator.allocate(8 << 20);
		this.allocator.free(block);
		assertThat(this.driver.usedBytes(0)).isZero();
		assertThat(this.driver.poolFreeBytes()).isZero();
		assertThat(this.allocator.allocatedBytes()).isZero();
		assertThat(this.driver.calls("cuMemFreeAsync")).isEqualTo(1);
		assertThat(this.driver.calls("cuMemPoolTrimTo")).isEqualTo(1);
		assertThat(this.driver.calls("cuMemFree")).isZero();
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> this.allocator.free(block))
			.withMessageContaining("freed twice");
	}

	/**
	 * gpumem's own rule, for its books: the driver takes either block either way, as CUDA 13's does
	 * ({@link #theDriverFreesEitherKindOfBlockEitherWayAsCudaDoes}).
	 */
	@Test
	void eachAllocatorFreesOnlyItsOwnBlocks() {
		MemoryAllocator plain = this.backend.allocator(MemoryKind.DEVICE);
		Allocation ordinary = plain.allocate(4096);
		Allocation ordered = this.allocator.allocate(4096);
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> this.allocator.free(ordinary))
			.withMessageContaining("not a block of the stream-ordered pool of device 0");
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> plain.free(ordered))
			.withMessageContaining("not a CUDA DEVICE allocation of device 0");
		plain.free(ordinary);
		this.allocator.free(ordered);
		assertThat(this.driver.usedBytes(0)).isZero();
	}

	@Test
	void theDriverFreesEitherKindOfBlockEitherWayAsCudaDoes() {
		Object context = this.driver.retainPrimaryContext(0);
		this.driver.setCurrentContext(context);
		Object stream = this.driver.createStream();
		Object pool = this.driver.createMemoryPool(0);
		Object ordinary = this.driver.allocateDevice(1 << 20);
		Object pooled = this.driver.allocateFromPool(pool, 1 << 20, stream);
		assertThat(this.driver.usedBytes(0)).isEqualTo(2 << 20);
		assertThatExceptionOfType(CudaException.class)
			.isThrownBy(() -> this.driver.freeAsync(this.driver.offset(ordinary, 256), stream))
			.satisfies((ex) -> assertThat(ex.codeName()).isEqualTo("CUDA_ERROR_INVALID_VALUE"));
		this.driver.freeAsync(ordinary, stream);
		assertThat(this.driver.usedBytes(0)).as("freed once the stream reaches it").isEqualTo(2 << 20);
		this.driver.synchronizeStream(stream);
		assertThat(this.driver.usedBytes(0)).isEqualTo(1 << 20);
		this.driver.freeDevice(pooled);
		assertThat(this.driver.usedBytes(0)).as("back to its pool, released at the synchronization").isZero();
		this.driver.destroyMemoryPool(pool);
		this.driver.destroyStream(stream);
		this.driver.releasePrimaryContext(0);
	}

	@Test
	void aRefusalIsAnOutOfMemoryExceptionWithTheDevicesFigures() {
		Allocation most = this.allocator.allocate(48L << 20);
		assertThatExceptionOfType(GpuOutOfMemoryException.class)
			.isThrownBy(() -> this.allocator.allocate(32L << 20))
			.satisfies((ex) -> {
				assertThat(ex.diagnostic().requestedBytes()).isEqualTo(32L << 20);
				assertThat(ex.diagnostic().freeBytes()).isEqualTo(16L << 20);
			});
		assertThat(this.allocator.allocatedBytes()).isEqualTo(48L << 20);
		this.allocator.free(most);
	}

	@Test
	void aPoolOverItKeepsWhatTheReleaseThresholdCannot() {
		PoolConfig config = PoolConfig.builder("async").maxCachedBytes(CAPACITY).build();
		try (StratifiedMemoryPool pool = new StratifiedMemoryPool(this.allocator, config)) {
			for (int i = 0; i < 50; i++) {
				try (PooledBuffer small = pool.acquire(4096); PooledBuffer large = pool.acquire(3 << 20)) {
					large.copyFrom(new int[] { i });
				}
			}
			assertThat(this.driver.calls("cuMemAllocFromPoolAsync")).as("one per block, each kept by gpumem").isEqualTo(2);
			assertThat(this.driver.poolReservations()).isEqualTo(2);
			PoolStatistics statistics = pool.statistics();
			assertThat(statistics.hits()).isEqualTo(98);
			assertThat(statistics.segments().segments()).as("every block a segment of its own").isEqualTo(2);
			assertThat(statistics.reservedBytes()).isEqualTo(this.allocator.allocatedBytes())
				.isEqualTo(this.driver.usedBytes(0));

			assertThat(pool.trim(0)).isEqualTo(statistics.reservedBytes());
			assertThat(this.driver.usedBytes(0)).isZero();
			assertThat(this.allocator.allocatedBytes()).isZero();
		}
	}

	@Test
	void requestThreadsOnTheirOwnStreamsShareThePoolWithExactAccounting() throws Exception {
		PoolConfig config = PoolConfig.builder("async").maxCachedBytes(16L << 20).build();
		Set<Object> lent = new HashSet<>();
		List<Callable<Void>> requests = new ArrayList<>();
		try (StratifiedMemoryPool pool = new StratifiedMemoryPool(this.allocator, config)) {
			for (int t = 0; t < 8; t++) {
				int thread = t;
				requests.add(() -> {
					SplittableRandom random = new SplittableRandom(thread);
					try (GpuStream stream = this.backend.createStream()) {
						for (int i = 0; i < 300; i++) {
							long bytes = 256 + random.nextLong(2L << 20);
							PooledBuffer buffer = (i % 2 == 0) ? pool.acquire(bytes, stream) : pool.acquire(bytes);
							Object pointer = buffer.unwrap(CudaMemory.class).pointer();
							synchronized (lent) {
								assertThat(lent.add(pointer)).as("a block lent twice").isTrue();
							}
							stream.fill(buffer, 0, bytes, (byte) thread);
							stream.synchronize();
							byte[] read = new byte[1];
							buffer.copyTo(bytes - 1, read, 0, 1);
							assertThat(read[0]).isEqualTo((byte) thread);
							synchronized (lent) {
								lent.remove(pointer);
							}
							buffer.close();
						}
					}
					return null;
				});
			}
			ExecutorService executor = Executors.newFixedThreadPool(8);
			try {
				for (Future<Void> request : executor.invokeAll(requests)) {
					request.get();
				}
			}
			finally {
				executor.shutdown();
			}
			assertThat(pool.usedBytes()).isZero();
			assertThat(pool.reservedBytes()).isLessThanOrEqualTo(16L << 20).isEqualTo(this.allocator.allocatedBytes())
				.isEqualTo(this.driver.usedBytes(0));
			assertThat(this.allocator.streamOrderedAllocations()).isPositive();
			pool.trim(0);
			assertThat(this.driver.usedBytes(0)).isZero();
		}
	}

	@Test
	void aBlockFreedAfterTheAllocatorClosedGoesBackToTheDevice() {
		Allocation outstanding = this.allocator.allocate(1 << 20);
		this.allocator.close();
		assertThat(this.driver.calls("cuMemPoolDestroy")).isEqualTo(1);
		assertThat(this.driver.usedBytes(0)).isEqualTo(1 << 20);
		this.allocator.free(outstanding);
		assertThat(this.driver.usedBytes(0)).isZero();
		assertThat(this.allocator.allocatedBytes()).isZero();
	}

	@Test
	void closingTheBackendDestroysThePool() {
		this.allocator.free(this.allocator.allocate(4096));
		this.backend.close();
		assertThat(this.driver.calls("cuMemPoolDestroy")).isEqualTo(1);
		assertThat(this.driver.retainedContexts()).isZero();
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> this.allocator.allocate(4096))
			.withMessageContaining("closed");
	}

}
