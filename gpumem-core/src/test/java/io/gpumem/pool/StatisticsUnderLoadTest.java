package io.gpumem.pool;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.gpumem.backend.GpuBackend;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A pool's statistics read from another thread while 16 threads lend and close are one consistent read, on every
 * setup: in every read {@code inUseBytes + cachedBytes == reservedBytes}, no figure is negative, and
 * {@code reservedBytes} is never above what the allocator beneath held at some instant of the read, the most it held
 * while the read ran being what bounds it.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class StatisticsUnderLoadTest {

	private static final long MIB = 1L << 20;

	private static final int THREADS = 16;

	private static final int ROUNDS = 3_000;

	private final ExecutorService executor = Executors.newFixedThreadPool(THREADS + 1);

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

	@ParameterizedTest
	@EnumSource(PoolSetup.class)
	void everyReadIsConsistentAndNeverAboveWhatTheAllocatorHeld(PoolSetup setup) throws Exception {
		this.backend = setup.open(1L << 30);
		HeldAllocator held = new HeldAllocator(setup.allocator(this.backend));
		this.pool = new StratifiedMemoryPool(held, PoolConfig.builder("device").build());
		long seed = Long.getLong("gpumem.seed", System.nanoTime());
		System.out.println("StatisticsUnderLoadTest seed: " + seed + " (replay with -Dgpumem.seed=" + seed + ")");
		AtomicBoolean lending = new AtomicBoolean(true);
		CountDownLatch started = new CountDownLatch(THREADS);
		List<Future<?>> lenders = new ArrayList<>();
		for (int t = 0; t < THREADS; t++) {
			SplittableRandom random = new SplittableRandom(seed + t);
			lenders.add(this.executor.submit(() -> {
				started.countDown();
				List<PooledBuffer> holding = new ArrayList<>();
				for (int round = 0; round < ROUNDS; round++) {
					holding.add(this.pool.acquire(size(random)));
					if (holding.size() > 4 || random.nextInt(3) == 0) {
						holding.remove(random.nextInt(holding.size())).close();
					}
					if (random.nextInt(500) == 0) {
						this.pool.trim(random.nextLong(8 * MIB));
					}
				}
				holding.forEach(PooledBuffer::close);
				return null;
			}));
		}
		Future<Integer> reader = this.executor.submit(() -> {
			started.await();
			int reads = 0;
			while (lending.get()) {
				long before = held.mark();
				PoolStatistics statistics = this.pool.statistics();
				long most = held.mostSinceMark();
				reads++;
				assertThat(statistics.inUseBytes() + statistics.cachedBytes()).as("in use and cached, read %d", reads)
					.isEqualTo(statistics.reservedBytes());
				assertThat(statistics.inUseBytes()).as("in use, read %d", reads).isNotNegative();
				assertThat(statistics.cachedBytes()).as("cached, read %d", reads).isNotNegative();
				assertThat(statistics.reservedBytes()).as("reserved, read %d, the allocator holding %d to %d bytes",
						reads, before, most).isLessThanOrEqualTo(most);
			}
			return reads;
		});
		try {
			for (Future<?> lender : lenders) {
				lender.get();
			}
		}
		finally {
			lending.set(false);
		}
		assertThat(reader.get()).as("reads").isPositive();
		PoolStatistics end = this.pool.statistics();
		assertThat(end.inUseBytes()).isZero();
		assertThat(end.reservedBytes()).isEqualTo(held.held());
	}

	/** Mostly the free lists' sizes, some up to 2 MiB, a few up to 8 MiB. */
	private static long size(SplittableRandom random) {
		int kind = random.nextInt(20);
		return (kind < 14) ? 1 + random.nextInt(64 << 10)
				: (kind < 19) ? (64 << 10) + random.nextInt(2 << 20) : (2 << 20) + random.nextInt(6 << 20);
	}

}
