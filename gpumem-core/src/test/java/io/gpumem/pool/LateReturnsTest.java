package io.gpumem.pool;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.allocator.StatisticsAllocator;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryKind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Buffers closed after stream work stay lent until the work has run, then serve the next request, a waiting
 * one included; once the pool is closed, they go back to the allocator after their work, not before.
 */
class LateReturnsTest {

	private static final long BLOCK = 256 * 1024;

	private final HostBackend backend = new HostBackend(4 * BLOCK);

	private final StatisticsAllocator allocator = new StatisticsAllocator(this.backend.allocator(MemoryKind.DEVICE));

	private final StratifiedMemoryPool pool = new StratifiedMemoryPool(this.allocator,
			PoolConfig.builder("late").sizeClasses(BLOCK).segmentSize(BLOCK).maxWait(Duration.ofSeconds(10)).build());

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@AfterEach
	void close() throws InterruptedException {
		this.threads.shutdownNow();
		this.threads.awaitTermination(10, TimeUnit.SECONDS);
		this.pool.close();
		assertThat(this.allocator.statistics().currentBytes()).as("everything given back").isZero();
		this.backend.close();
	}

	@Test
	void aBufferClosedAfterItsStreamStaysLentUntilTheWorkHasRunThenServesAWaitingAcquire() throws Exception {
		List<PooledBuffer> held = fill();
		ManualStream stream = new ManualStream();
		held.remove(0).closeAfter(stream);
		assertThat(this.pool.statistics().inUseBuffers()).as("the stream may still use it").isEqualTo(4);
		Future<PooledBuffer> waiter = this.threads.submit(() -> this.pool.acquire(BLOCK));
		await().atMost(Duration.ofMinutes(1)).until(() -> this.pool.statistics().memoryWaits().waits() > 0);
		assertThat(waiter).isNotDone();
		stream.finish();
		PooledBuffer served = waiter.get(10, TimeUnit.SECONDS);
		assertThat(this.pool.statistics().memoryWaits().timeouts()).isZero();
		assertThat(this.pool.statistics().inUseBuffers()).isEqualTo(4);
		assertThat(this.allocator.statistics().currentBytes()).isEqualTo(4 * BLOCK);
		served.close();
		held.forEach(PooledBuffer::close);
	}

	@Test
	void aBufferClosedAfterItsStreamGoesBackWithThePoolsCloseOnceItsWorkHasRun() {
		PooledBuffer lent = this.pool.acquire(BLOCK);
		ManualStream stream = new ManualStream();
		lent.closeAfter(stream);
		this.pool.close();
		assertThat(stream.record().isComplete()).as("the close waited for the stream's work").isTrue();
		assertThat(this.allocator.statistics().currentBytes()).isZero();
	}

	@Test
	void aBufferClosedAfterItsStreamOnceThePoolIsClosedGoesBackAfterItsWork() {
		PooledBuffer lent = this.pool.acquire(BLOCK);
		this.pool.close();
		assertThat(this.allocator.statistics().currentBytes()).as("still lent").isEqualTo(BLOCK);
		ManualStream stream = new ManualStream();
		lent.closeAfter(stream);
		assertThat(stream.record().isComplete()).isTrue();
		assertThat(this.allocator.statistics().currentBytes()).isZero();
	}

	private List<PooledBuffer> fill() {
		List<PooledBuffer> held = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			held.add(this.pool.acquire(BLOCK, Duration.ZERO));
		}
		return held;
	}

}
