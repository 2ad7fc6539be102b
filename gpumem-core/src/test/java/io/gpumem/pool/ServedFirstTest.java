package io.gpumem.pool;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryKind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Who is served first: while an acquire waits in line, a newcomer that misses the free lists goes behind it, though
 * the device has room for the newcomer, and one that may not wait fails at once saying why. The timeout only stops a
 * hang.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ServedFirstTest {

	private static final long MIB = 1L << 20;

	private final HostBackend backend = new HostBackend(100 * MIB);

	private final StratifiedMemoryPool pool = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE),
			PoolConfig.builder("device").maxWait(Duration.ofMinutes(1)).build());

	private final ExecutorService executor = Executors.newCachedThreadPool();

	@AfterEach
	void close() {
		this.executor.shutdownNow();
		this.pool.close();
		this.backend.close();
	}

	@Test
	void aNewcomerGoesBehindTheLineThoughTheDeviceHasRoomForIt() throws Exception {
		PooledBuffer held = this.pool.acquire(70 * MIB);
		Future<Long> first = this.executor.submit(() -> acquireAndClose(40 * MIB));
		await().atMost(Duration.ofMinutes(1)).until(() -> this.pool.statistics().memoryWaits().waits() == 1);
		Future<Long> newcomer = this.executor.submit(() -> acquireAndClose(25 * MIB));
		await().atMost(Duration.ofMinutes(1)).until(() -> this.pool.statistics().memoryWaits().waits() == 2);
		assertThat(this.backend.memoryInfo().freeBytes()).as("room for the newcomer").isGreaterThanOrEqualTo(25 * MIB);
		assertThat(newcomer).as("behind the one waiting").isNotDone();
		assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> this.pool.acquire(MIB, Duration.ZERO))
			.withMessageContaining("2 acquires of pool 'device' wait for memory ahead of this one, which may not wait: "
					+ "what comes back goes to them first");
		held.close();
		assertThat(first.get(1, TimeUnit.MINUTES)).isEqualTo(40 * MIB);
		assertThat(newcomer.get(1, TimeUnit.MINUTES)).isEqualTo(25 * MIB);
		PoolStatistics statistics = this.pool.statistics();
		assertThat(statistics.memoryWaits().timeouts()).isZero();
		assertThat(statistics.allocationFailures()).as("the newcomer that might not wait").isEqualTo(1);
		assertThat(statistics.inUseBytes()).isZero();
	}

	private long acquireAndClose(long bytes) {
		try (PooledBuffer buffer = this.pool.acquire(bytes)) {
			return buffer.size();
		}
	}

}
