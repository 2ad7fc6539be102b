package io.gpumem.pool;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;
import io.gpumem.stream.GpuStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What an acquire tries before it fails for good, as the JDK's direct memory and PyTorch's allocator do: the
 * garbage collector finds buffers dropped without close, and buffers closed after stream work come back once it
 * has run; and what it does not try, on a hit, an ordinary miss, or a request no memory given back could serve.
 */
class LastResortsTest {

	private static final long DEVICE = 64L << 20;

	private static final long EIGHT_MIB = 8L << 20;

	private final Opened opened = new Opened();

	@AfterEach
	void close() throws Exception {
		this.opened.close();
	}

	@Test
	void buffersDroppedWithoutCloseAreCollectedBeforeAnAcquireFails() {
		StratifiedMemoryPool pool = pool(hostDevice(), LeakDetection.SIMPLE);
		for (int i = 0; i < 100; i++) {
			pool.acquire(64 << 10).close();
			pool.acquire((i % 16 + 1) << 20).close();
		}
		pool.trim(0);
		assertThat(pool.statistics().memoryWaits().gcRequests()).as("no hit or ordinary miss asks for a GC")
			.isZero();
		dropWithoutClose(pool, 7);
		try (PooledBuffer large = pool.acquire(2 * EIGHT_MIB)) {
			large.fill((byte) 1);
		}
		PoolStatistics statistics = pool.statistics();
		assertThat(statistics.memoryWaits().gcRequests()).isEqualTo(1);
		assertThat(statistics.leakedBuffers()).as("as many as the collector found in time").isPositive();
		assertThat(statistics.allocationFailures()).isZero();
		assertThat(statistics.inUseBytes()).isLessThanOrEqualTo(7 * EIGHT_MIB);
	}

	@Test
	void withoutLeakDetectionNothingIsCollectedAndTheAcquireFails() {
		StratifiedMemoryPool pool = pool(hostDevice(), LeakDetection.DISABLED);
		dropWithoutClose(pool, 7);
		assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> pool.acquire(2 * EIGHT_MIB));
		assertThat(pool.statistics().memoryWaits().gcRequests()).isZero();
	}

	@Test
	void buffersClosedAfterABusyStreamComeBackBeforeAnAcquireFails() {
		FakeCudaDriver driver = new FakeCudaDriver(DEVICE);
		CudaBackend backend = open(CudaBackend.open(driver, 0));
		StratifiedMemoryPool pool = pool(backend.allocator(MemoryKind.DEVICE), LeakDetection.SIMPLE);
		GpuStream stream = open(backend.createStream());
		PooledBuffer kept = pool.acquire(EIGHT_MIB);
		for (int i = 0; i < 7; i++) {
			PooledBuffer busy = pool.acquire(EIGHT_MIB);
			stream.fill(busy, 0, EIGHT_MIB, (byte) i);
			busy.closeAfter(stream);
		}
		assertThat(driver.usedBytes(0)).as("the device is full").isEqualTo(DEVICE);
		try (PooledBuffer next = pool.acquire(EIGHT_MIB)) {
			next.fill((byte) 9);
		}
		kept.close();
		PoolStatistics statistics = pool.statistics();
		assertThat(statistics.memoryWaits().streamWaits()).isEqualTo(1);
		assertThat(statistics.memoryWaits().gcRequests()).as("the stream's work was enough").isZero();
		assertThat(statistics.allocationFailures()).isZero();
		assertThat(statistics.inUseBytes()).isZero();
	}

	@Test
	void aFailureCountsBuffersClosedAfterStreamWorkApartFromMemoryInUse() {
		FakeCudaDriver driver = new FakeCudaDriver(DEVICE);
		CudaBackend backend = open(CudaBackend.open(driver, 0));
		StratifiedMemoryPool pool = pool(backend.allocator(MemoryKind.DEVICE), LeakDetection.DISABLED);
		GpuStream stream = open(backend.createStream());
		List<PooledBuffer> kept = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			kept.add(pool.acquire(EIGHT_MIB));
		}
		PooledBuffer busy = kept.remove(0);
		stream.fill(busy, 0, EIGHT_MIB, (byte) 1);
		busy.closeAfter(stream);
		assertThatExceptionOfType(GpuOutOfMemoryException.class)
			.isThrownBy(() -> pool.acquire(EIGHT_MIB, Duration.ofMillis(50)))
			.satisfies((ex) -> {
				assertThat(ex.diagnostic().pendingBytes()).as("the fake runs no work unless waited for")
					.isEqualTo(EIGHT_MIB);
				assertThat(ex.diagnostic().inUseBytes()).isEqualTo(7 * EIGHT_MIB);
				assertThat(ex.getMessage())
					.contains("56.00 MiB in use, 8.00 MiB closed after stream work that has not completed");
			});
		assertThat(pool.statistics().memoryWaits().waits()).as("in line, taking back what completes").isEqualTo(1);
		assertThat(pool.statistics().memoryWaits().streamWaits()).as("only a request that may not wait syncs")
			.isZero();
		kept.forEach(PooledBuffer::close);
	}

	@Test
	void aRequestAboveTheCapacityFailsAtOnceAndKeepsTheCache() {
		StratifiedMemoryPool pool = pool(hostDevice(), LeakDetection.SIMPLE);
		pool.acquire(EIGHT_MIB).close();
		long cached = pool.cachedBytes();
		assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> pool.acquire(1L << 50))
			.satisfies((ex) -> assertThat(ex.diagnostic().exceedsCapacity()).isTrue());
		assertThat(pool.cachedBytes()).as("nothing trimmed for a request no trim could serve").isEqualTo(cached);
		assertThat(pool.statistics().memoryWaits().gcRequests()).isZero();
		try (PooledBuffer buffer = pool.acquire(EIGHT_MIB)) {
			buffer.fill((byte) 1);
		}
		assertThat(pool.statistics().hits()).isEqualTo(1);
	}

	private static void dropWithoutClose(StratifiedMemoryPool pool, int count) {
		for (int i = 0; i < count; i++) {
			pool.acquire(EIGHT_MIB).fill((byte) i);
		}
	}

	private MemoryAllocator hostDevice() {
		return open(new HostBackend(DEVICE)).allocator(MemoryKind.DEVICE);
	}

	private StratifiedMemoryPool pool(MemoryAllocator allocator, LeakDetection leaks) {
		return open(new StratifiedMemoryPool(allocator, PoolConfig.builder("device").leakDetection(leaks).build()));
	}

	private <T extends AutoCloseable> T open(T closeable) {
		return this.opened.add(closeable);
	}

}
