package io.gpumem.pool;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryKind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Acquires that wait in line for memory to be returned, instead of failing at once. */
class MemoryWaitTest {

	private static final long BLOCK = 256 * 1024;

	private final HostBackend backend = new HostBackend(4 * BLOCK);

	private final ExecutorService threads = Executors.newCachedThreadPool();

	private final StratifiedMemoryPool pool = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE),
			PoolConfig.builder("waiting").sizeClasses(BLOCK, 2 * BLOCK).maxWait(Duration.ofSeconds(10)).build());

	@AfterEach
	void close() throws InterruptedException {
		this.threads.shutdownNow();
		this.threads.awaitTermination(10, TimeUnit.SECONDS);
		this.pool.close();
		this.backend.close();
	}

	@Test
	void aLongWaitRunsTheOutOfMemoryChainAfterReturnsAndOnEveryTenthPollOnly() {
		List<PooledBuffer> held = fill();
		AtomicInteger chainSteps = new AtomicInteger();
		this.pool.addListener(new PoolListener() {

			@Override
			public long outOfMemory(MemoryPool pool, long requestedBytes, int attempt) {
				chainSteps.incrementAndGet();
				return 0;
			}

		});
		assertThatThrownBy(() -> this.pool.acquire(BLOCK, Duration.ofMillis(500)))
			.isInstanceOf(GpuOutOfMemoryException.class);
		assertThat(chainSteps.get()).as("the first try, then one in ten of at most 50 polls in the wait")
			.isBetween(1, 10);
		held.forEach(PooledBuffer::close);
	}

	@Test
	void aWaitingAcquireIsServedByABufferClosedOnAnotherThread() throws Exception {
		List<PooledBuffer> held = fill();
		Future<PooledBuffer> waiter = waitingAcquire(BLOCK, () -> {
		});
		held.remove(0).close();
		PooledBuffer served = waiter.get(10, TimeUnit.SECONDS);
		assertThat(served.capacity()).isEqualTo(BLOCK);
		PoolStatistics stats = this.pool.statistics();
		assertThat(stats.memoryWaits().waits()).isEqualTo(1);
		assertThat(stats.memoryWaits().timeouts()).isZero();
		assertThat(stats.allocationFailures()).isZero();
		assertThat(stats.inUseBuffers()).isEqualTo(4);
		served.close();
		held.forEach(PooledBuffer::close);
	}

	@Test
	void aWaiterOfAnotherClassGetsTheMemoryOfCachedBuffersTrimmedForIt() throws Exception {
		List<PooledBuffer> held = fill();
		Future<PooledBuffer> waiter = waitingAcquire(2 * BLOCK, () -> {
		});
		held.remove(0).close();
		assertThat(waiter).as("half the memory it needs came back").isNotDone();
		held.remove(0).close();
		assertThat(waiter.get(10, TimeUnit.SECONDS).capacity()).isEqualTo(2 * BLOCK);
		assertThat(this.pool.statistics().allocationFailures()).isZero();
		held.forEach(PooledBuffer::close);
	}

	@Test
	void aWaitThatRunsOutFailsWithTheDiagnosticAndLeavesThePoolAsItWas() {
		List<PooledBuffer> held = fill();
		assertThatThrownBy(() -> this.pool.acquire(BLOCK, Duration.ofMillis(100)))
			.isInstanceOf(GpuOutOfMemoryException.class)
			.hasMessageContaining("Out of DEVICE memory")
			.hasMessageContaining("1.00 MiB in use")
			.hasMessageMatching("(?s).*waited \\d+ ms for memory to be returned.*");
		PoolStatistics stats = this.pool.statistics();
		assertThat(stats.memoryWaits().timeouts()).isEqualTo(1);
		assertThat(stats.memoryWaits().waitNanos()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(100));
		assertThat(stats.allocationFailures()).isEqualTo(1);
		assertThat(stats.inUseBuffers()).isEqualTo(4);
		assertThat(stats.reservedBytes()).isEqualTo(4 * BLOCK);
		held.forEach(PooledBuffer::close);
		assertThat(this.pool.acquire(BLOCK, Duration.ZERO).capacity()).isEqualTo(BLOCK);
	}

	@Test
	void aRequestLargerThanTheDeviceFailsAtOnceInsteadOfWaiting() {
		assertThatThrownBy(() -> this.pool.acquire(8 * BLOCK)).isInstanceOf(GpuOutOfMemoryException.class)
			.hasMessageContaining("total capacity of 1.00 MiB")
			.hasMessageNotContaining("waited");
		assertThat(this.pool.statistics().memoryWaits().waits()).isZero();
	}

	@Test
	void waitersAreServedInTheOrderTheyCame() throws Exception {
		List<PooledBuffer> held = fill();
		List<Integer> served = new CopyOnWriteArrayList<>();
		List<Future<PooledBuffer>> waiters = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			int id = i;
			waiters.add(waitingAcquire(BLOCK, () -> served.add(id)));
		}
		for (int i = 0; i < 3; i++) {
			held.remove(0).close();
			int count = i + 1;
			await().atMost(Duration.ofMinutes(1)).until(() -> served.size() == count);
		}
		assertThat(served).containsExactly(0, 1, 2);
		for (Future<PooledBuffer> waiter : waiters) {
			waiter.get().close();
		}
		held.forEach(PooledBuffer::close);
	}

	@Test
	void manyThreadsOverATightDeviceAllGetServedAndTheBooksBalance() throws Exception {
		List<Future<Integer>> workers = new ArrayList<>();
		for (int t = 0; t < 12; t++) {
			long seed = t;
			workers.add(this.threads.submit(() -> {
				SplittableRandom random = new SplittableRandom(seed);
				long[] word = new long[1];
				for (int op = 0; op < 300; op++) {
					try (PooledBuffer buffer = this.pool.acquire(random.nextBoolean() ? BLOCK : 2 * BLOCK)) {
						word[0] = (seed << 32) | op;
						buffer.copyFrom(0, word, 0, 1);
						Thread.onSpinWait();
						long[] back = new long[1];
						buffer.copyTo(0, back, 0, 1);
						assertThat(back[0]).as("a buffer lent to one thread only").isEqualTo(word[0]);
					}
				}
				return 300;
			}));
		}
		for (Future<Integer> worker : workers) {
			assertThat(worker.get(60, TimeUnit.SECONDS)).isEqualTo(300);
		}
		PoolStatistics stats = this.pool.statistics();
		assertThat(stats.allocationFailures()).isZero();
		assertThat(stats.inUseBuffers()).isZero();
		assertThat(stats.requests()).isEqualTo(12 * 300);
		assertThat(stats.returns()).isEqualTo(12 * 300);
		assertThat(stats.cachedBytes()).isEqualTo(stats.reservedBytes());
		assertThat(this.pool.trim(0)).isEqualTo(stats.reservedBytes());
		assertThat(this.backend.memoryInfo().freeBytes()).isEqualTo(4 * BLOCK);
	}

	@Test
	void aNegativeWaitIsRefusedNamingIt() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.pool.acquire(BLOCK, Duration.ofSeconds(-1)))
			.withMessageContaining("PT-1S");
		assertThatIllegalArgumentException().isThrownBy(() -> PoolConfig.builder("p").maxWait(Duration.ofMillis(-5)))
			.withMessage("max-wait must be zero or more, not PT-0.005S");
	}

	private List<PooledBuffer> fill() {
		List<PooledBuffer> held = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			held.add(this.pool.acquire(BLOCK, Duration.ZERO));
		}
		return held;
	}

	/**
	 * Starts an acquire of {@code bytes} on a thread of its own, which runs {@code served} once it has its buffer,
	 * and returns once the acquire waits in line for memory: counted as a wait, its thread parked.
	 */
	private Future<PooledBuffer> waitingAcquire(long bytes, Runnable served) {
		long waits = this.pool.statistics().memoryWaits().waits();
		CompletableFuture<Thread> thread = new CompletableFuture<>();
		Future<PooledBuffer> waiter = this.threads.submit(() -> {
			thread.complete(Thread.currentThread());
			PooledBuffer buffer = this.pool.acquire(bytes);
			served.run();
			return buffer;
		});
		Thread waiting = thread.join();
		await().atMost(Duration.ofMinutes(1))
			.until(() -> this.pool.statistics().memoryWaits().waits() > waits
					&& waiting.getState() == Thread.State.TIMED_WAITING);
		assertThat(waiter).as("waiting for memory").isNotDone();
		return waiter;
	}

}
