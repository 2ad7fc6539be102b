package io.gpumem.pool;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.GpuRetryOutOfMemoryException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Waiting acquires that cannot deadlock: where every thread holding memory of a pool waits for more, the one holding
 * most is told to give way with a {@link GpuRetryOutOfMemoryException}, and, once it closed what it held and ran
 * again, every request completes within a wait of an hour that none runs out. The timeout only stops a hang.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class GiveWayTest {

	private static final long MIB = 1L << 20;

	private static final Duration HOUR = Duration.ofHours(1);

	private final HostBackend backend = new HostBackend(100 * MIB);

	/** Over expandable segments, so that no free memory is out of reach of a request for want of a segment to fit in. */
	private final StratifiedMemoryPool pool = new StratifiedMemoryPool(this.backend.virtualMemory().allocator(),
			PoolConfig.builder("device").maxWait(HOUR).build());

	private final ExecutorService executor = Executors.newCachedThreadPool();

	@AfterEach
	void close() {
		this.executor.shutdownNow();
		this.pool.close();
		this.backend.close();
	}

	/**
	 * A request that acquires {@code first} MiB, then, once {@code go} opens, {@code second} more at once; runs again
	 * from the start when told to give way.
	 * @return how many runs it took
	 */
	private Future<Integer> request(long first, long second, CountDownLatch go) {
		return this.executor.submit(() -> {
			for (int run = 1;; run++) {
				try (PooledBuffer a = this.pool.acquire(first * MIB)) {
					go.await();
					try (PooledBuffer b = this.pool.acquire(second * MIB)) {
						return run;
					}
				}
				catch (GpuRetryOutOfMemoryException told) {
					assertThat(told.heldBytes()).isEqualTo(first * MIB);
				}
			}
		});
	}

	/** Waits until the pool lends {@code mib} in all. */
	private void awaitLent(long mib) {
		await().atMost(Duration.ofMinutes(1)).until(() -> this.pool.statistics().inUseBytes() == mib * MIB);
	}

	@Test
	void theLastToWaitHoldingMostIsToldAtOnceAndEveryRequestCompletes() throws Exception {
		PooledBuffer blocker = this.pool.acquire(28 * MIB);
		PooledBuffer mine = this.pool.acquire(25 * MIB);
		CountDownLatch go = new CountDownLatch(1);
		List<Future<Integer>> others = new ArrayList<>();
		for (long held : new long[] { 10, 15, 20 }) {
			others.add(request(held, 35, go));
		}
		awaitLent(98);
		go.countDown();
		await().atMost(Duration.ofMinutes(1)).until(() -> this.pool.statistics().memoryWaits().waits() == 3);
		blocker.close();
		assertThat(this.pool.statistics().memoryWaits().gaveWay()).as("this thread holds memory and does not wait")
			.isZero();
		try (PoolLog log = PoolLog.capture(Level.WARNING)) {
			assertThatExceptionOfType(GpuRetryOutOfMemoryException.class).isThrownBy(() -> this.pool.acquire(35 * MIB))
				.withMessageContaining("every thread holding memory of pool 'device' waits for more: this one, "
						+ "holding most, gives way")
				.satisfies((ex) -> assertThat(ex.heldBytes()).isEqualTo(25 * MIB));
			mine.close();
			for (Future<Integer> other : others) {
				assertThat(other.get(1, TimeUnit.MINUTES)).as("runs of a request that was not told").isEqualTo(1);
			}
			assertThat(log.messages()).containsExactly("Every thread holding memory of pool 'device' waits for more "
					+ "(4 acquires wait): the one holding most (25.00 MiB) is told to give way and retry (logged once "
					+ "until no acquire waits)");
		}
		try (PooledBuffer again = this.pool.acquire(25 * MIB); PooledBuffer more = this.pool.acquire(35 * MIB)) {
			assertThat(this.pool.statistics().inUseBytes()).isEqualTo(60 * MIB);
		}
		PoolStatistics.Waits waits = this.pool.statistics().memoryWaits();
		assertThat(waits.gaveWay()).isEqualTo(1);
		assertThat(waits.timeouts()).isZero();
		assertThat(this.pool.statistics().inUseBytes()).isZero();
		assertThat(this.pool.statistics().allocationFailures()).as("the request told to give way").isEqualTo(1);
	}

	@Test
	void aWaiterHoldingMostIsToldOnceTheLastHolderThatDidNotWaitLetsGo() throws Exception {
		PooledBuffer blocker = this.pool.acquire(40 * MIB);
		CountDownLatch go = new CountDownLatch(1);
		List<Future<Integer>> others = new ArrayList<>();
		for (long held : new long[] { 10, 15 }) {
			others.add(request(held, 60, go));
		}
		Future<Integer> most = request(20, 60, go);
		awaitLent(85);
		go.countDown();
		await().atMost(Duration.ofMinutes(1)).until(() -> this.pool.statistics().memoryWaits().waits() == 3);
		assertThat(this.pool.statistics().memoryWaits().gaveWay()).isZero();
		blocker.close();
		assertThat(most.get(1, TimeUnit.MINUTES)).as("runs of the request holding most").isGreaterThan(1);
		for (Future<Integer> other : others) {
			other.get(1, TimeUnit.MINUTES);
		}
		PoolStatistics statistics = this.pool.statistics();
		assertThat(statistics.memoryWaits().gaveWay()).isPositive();
		assertThat(statistics.memoryWaits().timeouts()).isZero();
		assertThat(statistics.inUseBytes()).isZero();
	}

	/**
	 * Two requests wait, each holding memory, while this thread holds more and does not wait: the first in line looks
	 * again and again with another waiting, and tells nobody, since the holder that does not wait will give back.
	 */
	@Test
	void aHolderThatDoesNotWaitIsLeftToFinishAndNobodyIsTold() throws Exception {
		AtomicInteger freeingTries = new AtomicInteger();
		this.pool.addListener(new PoolListener() {

			@Override
			public long outOfMemory(MemoryPool pool, long requestedBytes, int attempt) {
				if (attempt == 0) {
					freeingTries.incrementAndGet();
				}
				return 0;
			}

		});
		PooledBuffer running = this.pool.acquire(60 * MIB);
		CountDownLatch go = new CountDownLatch(1);
		List<Future<Integer>> waiting = List.of(request(6, 40, go), request(10, 40, go));
		awaitLent(76);
		go.countDown();
		await().atMost(Duration.ofMinutes(1)).until(() -> this.pool.statistics().memoryWaits().waits() == 2);
		int tries = freeingTries.get();
		await().atMost(Duration.ofMinutes(1)).until(() -> freeingTries.get() >= tries + 2);
		assertThat(waiting).as("requests served while the holder holds").noneMatch(Future::isDone);
		assertThat(this.pool.statistics().memoryWaits().gaveWay())
			.as("told to give way after the first in line looked again with both waiting")
			.isZero();
		running.close();
		for (Future<Integer> request : waiting) {
			assertThat(request.get(1, TimeUnit.MINUTES)).as("runs of a request").isEqualTo(1);
		}
		PoolStatistics statistics = this.pool.statistics();
		assertThat(statistics.memoryWaits().gaveWay()).isZero();
		assertThat(statistics.memoryWaits().timeouts()).isZero();
		assertThat(statistics.inUseBytes()).isZero();
	}

}
