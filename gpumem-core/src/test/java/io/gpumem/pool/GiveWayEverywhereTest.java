package io.gpumem.pool;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.gpumem.backend.GpuBackend;
import io.gpumem.memory.GpuRetryOutOfMemoryException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Requests that each hold memory and wait for more than is left complete on every setup, told to give way in turn,
 * whatever came before: a buffer leaked and reclaimed included. Each request waits at most 30 s, longer than any of
 * them needs by far; the timeout only stops a hang.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class GiveWayEverywhereTest {

	private static final long MIB = 1L << 20;

	private static final Duration WAIT = Duration.ofSeconds(30);

	private final ExecutorService executor = Executors.newCachedThreadPool();

	private GpuBackend backend;

	private StratifiedMemoryPool pool;

	@AfterEach
	void close() {
		this.executor.shutdownNow();
		if (this.pool != null) {
			this.pool.close();
			this.backend.close();
		}
	}

	private void open(PoolSetup setup) {
		this.backend = setup.open(100 * MIB);
		this.pool = setup.pool(this.backend, "device", (config) -> config.maxWait(WAIT));
	}

	@ParameterizedTest
	@EnumSource(PoolSetup.class)
	void threeRequestsHoldingAQuarterEachAndAskingForTwoFifthsMoreAllComplete(PoolSetup setup) throws Exception {
		open(setup);
		threeRequestsComplete();
	}

	@ParameterizedTest
	@EnumSource(PoolSetup.class)
	void aLeakedBufferReclaimedLeavesGivingWayAsItWas(PoolSetup setup) throws Exception {
		open(setup);
		Thread leaking = new Thread(() -> this.pool.acquire(2 * MIB).fill((byte) 1));
		leaking.start();
		leaking.join();
		await().atMost(Duration.ofMinutes(1)).until(() -> {
			System.gc();
			this.pool.trim(Long.MAX_VALUE);
			return this.pool.statistics().leakedBuffers() == 1;
		});
		assertThat(this.pool.statistics().inUseBytes()).isZero();
		threeRequestsComplete();
	}

	/**
	 * Three requests that each acquire 25 MiB, then, once all three hold theirs, 40 MiB more, closing what they hold and
	 * running again when told to give way: all complete, none waits out its wait, and nothing is left lent.
	 */
	private void threeRequestsComplete() throws Exception {
		CountDownLatch holding = new CountDownLatch(3);
		List<Future<Integer>> requests = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			requests.add(this.executor.submit(() -> {
				for (int run = 1;; run++) {
					try (PooledBuffer held = this.pool.acquire(25 * MIB, WAIT)) {
						holding.countDown();
						holding.await();
						try (PooledBuffer more = this.pool.acquire(40 * MIB, WAIT)) {
							return run;
						}
					}
					catch (GpuRetryOutOfMemoryException told) {
						assertThat(told.heldBytes()).isEqualTo(25 * MIB);
					}
				}
			}));
		}
		for (Future<Integer> request : requests) {
			assertThat(request.get(2, TimeUnit.MINUTES)).as("runs").isPositive();
		}
		PoolStatistics statistics = this.pool.statistics();
		assertThat(statistics.memoryWaits().timeouts()).as("waits that ran out").isZero();
		assertThat(statistics.memoryWaits().gaveWay()).as("requests told to give way").isPositive();
		assertThat(statistics.inUseBytes()).isZero();
	}

}
