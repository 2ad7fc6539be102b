package io.gpumem.pool;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import io.gpumem.backend.GpuBackend;
import io.gpumem.memory.MemoryKind;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A pool put to sleep and woken again and again while threads acquire, write, read back and close buffers, and keep
 * some across many sleeps: every copy finds the bytes last written, whatever sleep or wake ran meanwhile; every
 * request and copy ends; the statistics' invariants hold in every read; and once all is closed and trimmed the device
 * holds nothing. The seed is printed; {@code -Dgpumem.seed=} replays each thread's choices.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SleepUnderLoadTest {

	private static final long MIB = 1L << 20;

	private static final int THREADS = 6;

	private static final int ROUNDS = 120;

	@ParameterizedTest
	@MethodSource("io.gpumem.pool.SleepWakeTest#backends")
	void everyCopyFindsItsBytesWhileThePoolSleepsAndWakes(LongFunction<GpuBackend> backends) throws Exception {
		long seed = Long.getLong("gpumem.seed", System.nanoTime());
		System.out.println("SleepUnderLoadTest seed: " + seed + " (replay with -Dgpumem.seed=" + seed + ")");
		GpuBackend backend = backends.apply(1L << 30);
		StratifiedMemoryPool pool = new StratifiedMemoryPool(backend.virtualMemory().allocator(),
				PoolConfig.builder("restless").build());
		ExecutorService threads = Executors.newFixedThreadPool(THREADS + 1);
		try {
			List<Future<Long>> workers = new ArrayList<>();
			for (int t = 0; t < THREADS; t++) {
				SplittableRandom random = new SplittableRandom(seed + t);
				workers.add(threads.submit(() -> work(pool, random)));
			}
			SplittableRandom random = new SplittableRandom(seed - 1);
			Future<Integer> sleeper = threads.submit(() -> {
				int sleeps = 0;
				while (!workers.stream().allMatch(Future::isDone)) {
					if (random.nextInt(4) == 0) {
						pool.trim(random.nextLong(8 * MIB));
					}
					else {
						pool.sleep(SleepMode.OFFLOAD);
						sleeps++;
					}
					assertInvariants(pool.statistics());
					Thread.sleep(random.nextInt(3));
					if (random.nextBoolean()) {
						pool.wake();
					}
				}
				return sleeps;
			});
			long copies = 0;
			for (Future<Long> worker : workers) {
				copies += worker.get(2, TimeUnit.MINUTES);
			}
			int sleeps = sleeper.get(1, TimeUnit.MINUTES);
			System.out.println("SleepUnderLoadTest: " + copies + " copies checked across " + sleeps + " sleeps");
			assertThat(sleeps).as("seed %d", seed).isPositive();
			assertThat(pool.sleepStatus().sleeps()).isEqualTo(sleeps);
		}
		finally {
			threads.shutdownNow();
		}
		pool.wake();
		pool.trim(0);
		assertThat(pool.statistics().inUseBuffers()).as("seed %d", seed).isZero();
		assertThat(pool.reservedBytes()).isZero();
		var info = backend.allocator(MemoryKind.DEVICE).memoryInfo();
		assertThat(info.totalBytes() - info.freeBytes()).as("the device's memory used, seed %d", seed).isZero();
		pool.close();
	}

	/** Rounds of a buffer acquired, written, read back and closed, beside two kept the whole run: the copies checked. */
	private static long work(StratifiedMemoryPool pool, SplittableRandom random) {
		Held kept = Held.of(pool, random, 1 + random.nextInt(4 << 20));
		Held keptSmall = Held.of(pool, random, 1 + random.nextInt(64 << 10));
		long copies = 0;
		for (int round = 0; round < ROUNDS; round++) {
			try (Held held = Held.of(pool, random, 1 + random.nextInt(6 << 20))) {
				held.check();
				copies++;
			}
			if (random.nextInt(8) == 0) {
				kept.check();
				kept.rewrite(random);
				keptSmall.check();
				copies += 2;
			}
			assertInvariants(pool.statistics());
		}
		kept.check();
		keptSmall.check();
		kept.close();
		keptSmall.close();
		return copies + 2;
	}

	private static void assertInvariants(PoolStatistics statistics) {
		assertThat(statistics.inUseBytes()).isNotNegative();
		assertThat(statistics.cachedBytes()).isNotNegative();
		assertThat(statistics.inUseBuffers()).isNotNegative();
	}

	/** A buffer with the bytes last written to it. */
	private record Held(PooledBuffer buffer, byte[] bytes) implements AutoCloseable {

		static Held of(StratifiedMemoryPool pool, SplittableRandom random, int size) {
			Held held = new Held(pool.acquire(size), new byte[size]);
			held.rewrite(random);
			return held;
		}

		void rewrite(SplittableRandom random) {
			random.nextBytes(this.bytes);
			this.buffer.copyFrom(this.bytes);
		}

		void check() {
			byte[] back = new byte[this.bytes.length];
			this.buffer.copyTo(back);
			assertThat(Arrays.mismatch(back, this.bytes)).as("the first byte of %d that differs", back.length)
				.isEqualTo(-1);
		}

		@Override
		public void close() {
			this.buffer.close();
		}

	}

}
