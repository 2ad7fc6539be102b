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
import java.util.function.Supplier;
import java.util.logging.Level;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaException;
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

	/** The refusing driver refuses one call in this many of those it refuses. */
	private static final int REFUSED = 10;

	@ParameterizedTest
	@MethodSource("io.gpumem.pool.SleepWakeTest#backends")
	void everyCopyFindsItsBytesWhileThePoolSleepsAndWakes(LongFunction<GpuBackend> backends) throws Exception {
		long seed = Long.getLong("gpumem.seed", System.nanoTime());
		System.out.println("SleepUnderLoadTest seed: " + seed + " (replay with -Dgpumem.seed=" + seed + ")");
		run(backends.apply(1L << 30), RefusedUnmaps.NONE, seed);
	}

	/**
	 * The same on the fake driver refusing one unmap, one offload and one copy back in {@value #REFUSED}, as a failed
	 * device does: a sleep, a wake or a trim may fail with the driver's error, and a use or an acquire that wakes the
	 * pool too, each tried again; every copy still finds its bytes, every refusal reaches a caller or the pool's log,
	 * and the books are exact.
	 */
	@Test
	void everyCopyFindsItsBytesWhileTheDriverRefusesUnmapsAndCopies() throws Exception {
		long seed = Long.getLong("gpumem.seed", System.nanoTime());
		System.out.println("SleepUnderLoadTest refusing seed: " + seed + " (replay with -Dgpumem.seed=" + seed + ")");
		RefusedUnmaps refusals = RefusedUnmaps.andCopies(REFUSED, seed - 2);
		try (PoolLog log = PoolLog.capture(Level.WARNING).quiet()) {
			run(refusals.open(1L << 30), refusals, seed);
			assertThat(refusals.reported()).as("refusals thrown, seed %d", seed).isPositive();
			assertThat(refusals.refused()).as("calls refused, seed %d", seed)
				.isEqualTo(refusals.reported() + RefusedUnmaps.refusalsIn(log.thrown()));
		}
	}

	/**
	 * Runs the workers and the sleeper on {@code backend}, whose driver refuses {@code refusals} until the workers are
	 * done; then the pool, woken and trimmed, must hold nothing.
	 */
	private static void run(GpuBackend backend, RefusedUnmaps refusals, long seed) throws Exception {
		StratifiedMemoryPool pool = new StratifiedMemoryPool(backend.virtualMemory().allocator(),
				PoolConfig.builder("restless").build());
		ExecutorService threads = Executors.newFixedThreadPool(THREADS + 1);
		try {
			List<Future<Long>> workers = new ArrayList<>();
			for (int t = 0; t < THREADS; t++) {
				SplittableRandom random = new SplittableRandom(seed + t);
				workers.add(threads.submit(() -> work(pool, random, refusals)));
			}
			SplittableRandom random = new SplittableRandom(seed - 1);
			Future<Integer> sleeper = threads.submit(() -> {
				int sleeps = 0;
				while (!workers.stream().allMatch(Future::isDone)) {
					try {
						if (random.nextInt(4) == 0) {
							pool.trim(random.nextLong(8 * MIB));
						}
						else {
							pool.sleep(SleepMode.OFFLOAD);
							sleeps++;
						}
					}
					catch (CudaException ex) {
						refusals.report(ex);
					}
					assertInvariants(pool.statistics());
					Thread.sleep(random.nextInt(3));
					if (random.nextBoolean()) {
						untilDone(pool::wake, refusals);
					}
				}
				return sleeps;
			});
			long copies = 0;
			for (Future<Long> worker : workers) {
				copies += worker.get(2, TimeUnit.MINUTES);
			}
			int sleeps = sleeper.get(1, TimeUnit.MINUTES);
			System.out.println("SleepUnderLoadTest: " + copies + " copies checked across " + sleeps + " sleeps, "
					+ refusals.refused() + " calls refused");
			assertThat(sleeps).as("seed %d", seed).isPositive();
			assertThat(pool.sleepStatus().sleeps()).isEqualTo(sleeps);
		}
		finally {
			threads.shutdownNow();
			refusals.end();
		}
		pool.wake();
		pool.trim(0);
		assertThat(pool.statistics().inUseBuffers()).as("seed %d", seed).isZero();
		assertThat(pool.reservedBytes()).isZero();
		var info = backend.allocator(MemoryKind.DEVICE).memoryInfo();
		assertThat(info.totalBytes() - info.freeBytes()).as("the device's memory used, seed %d", seed).isZero();
		pool.close();
	}

	/** Calls {@code call} until the driver refuses it no more, each refusal reported: its result. */
	private static <T> T untilDone(Supplier<T> call, RefusedUnmaps refusals) {
		while (true) {
			try {
				return call.get();
			}
			catch (CudaException ex) {
				refusals.report(ex);
			}
		}
	}

	/** Rounds of a buffer acquired, written, read back and closed, beside two kept the whole run: the copies checked. */
	private static long work(StratifiedMemoryPool pool, SplittableRandom random, RefusedUnmaps refusals) {
		Held kept = Held.of(pool, random, 1 + random.nextInt(4 << 20), refusals);
		Held keptSmall = Held.of(pool, random, 1 + random.nextInt(64 << 10), refusals);
		long copies = 0;
		for (int round = 0; round < ROUNDS; round++) {
			try (Held held = Held.of(pool, random, 1 + random.nextInt(6 << 20), refusals)) {
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

	/**
	 * A buffer with the bytes last written to it; each acquire and copy, which may wake the pool, tried again as the
	 * driver refuses ({@link #untilDone}).
	 */
	private record Held(PooledBuffer buffer, byte[] bytes, RefusedUnmaps refusals) implements AutoCloseable {

		static Held of(StratifiedMemoryPool pool, SplittableRandom random, int size, RefusedUnmaps refusals) {
			Held held = new Held(untilDone(() -> pool.acquire(size), refusals), new byte[size], refusals);
			held.rewrite(random);
			return held;
		}

		void rewrite(SplittableRandom random) {
			random.nextBytes(this.bytes);
			untilDone(() -> {
				this.buffer.copyFrom(this.bytes);
				return this.bytes;
			}, this.refusals);
		}

		void check() {
			byte[] back = untilDone(() -> {
				byte[] read = new byte[this.bytes.length];
				this.buffer.copyTo(read);
				return read;
			}, this.refusals);
			assertThat(Arrays.mismatch(back, this.bytes)).as("the first byte of %d that differs", back.length)
				.isEqualTo(-1);
		}

		@Override
		public void close() {
			this.buffer.close();
		}

	}

}
