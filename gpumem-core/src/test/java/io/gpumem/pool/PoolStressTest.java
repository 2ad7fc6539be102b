package io.gpumem.pool;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.stream.Stream;

import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import io.gpumem.allocator.FaultInjectingAllocator;
import io.gpumem.allocator.StatisticsAllocator;
import io.gpumem.allocator.TrackingAllocator;
import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.CudaException;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Many threads acquire, stamp, verify and release buffers of mixed sizes while another trims: no
 * buffer may ever have two owners, and the books must balance to the byte at the end. The sizes span
 * the classes cached in the free lists, those cut from the arena's segments at each request (half of the
 * requests repeat one of two such sizes, which the stripes keep as their last blocks), and requests above
 * the top class.
 */
class PoolStressTest {

	private static final int THREADS = 4;

	private static final int OPERATIONS_PER_THREAD = 250_000;

	private static final long CAPACITY = 256L << 20;

	/** One unmap in this many is refused where the driver refuses some. */
	private static final int UNMAPS_REFUSED = 10;

	/** Sizes above the free lists' classes that half the requests repeat, so that stripes keep their last blocks. */
	private static final long[] REPEATED = { 300_000, 1_000_000 };

	/**
	 * The host backend and the CUDA backend on the fake driver, each with segments that are allocations and with
	 * expandable segments, granules mapped into reserved ranges.
	 */
	static Stream<Named<Memory>> memories() {
		Supplier<GpuBackend> host = () -> new HostBackend(CAPACITY);
		Supplier<GpuBackend> fake = () -> CudaBackend.open(new FakeCudaDriver(CAPACITY), 0);
		return Stream.of(Named.of("host", new Memory(host, false)),
				Named.of("host, expandable", new Memory(host, true)),
				Named.of("cuda on the fake driver", new Memory(fake, false)),
				Named.of("cuda on the fake driver, expandable", new Memory(fake, true)));
	}

	@ParameterizedTest
	@MethodSource("memories")
	void concurrentAcquireReleaseAndTrimKeepOwnershipAndAccountingExact(Memory memory) throws Exception {
		Result result = run(memory, null, RefusedUnmaps.NONE);
		assertThat(result.failures).isZero();
	}

	/**
	 * Without retries, so that each injected fault reaches the caller: a retry after trimming hides a
	 * fault whenever anything is cached, and with requests above the top class cached that is nearly always. Over
	 * expandable segments a fault mapping a step is met by mapping the request's own granules, and fewer calls are
	 * made, so faults come more often than a real device's.
	 */
	@ParameterizedTest
	@MethodSource("memories")
	void aFailingAllocatorLosesNothingAndFailsOnlyWithOurException(Memory memory) throws Exception {
		Result result = run(memory, memory.expandable() ? 0.2 : 0.01, RefusedUnmaps.NONE);
		assertThat(result.failures).isPositive();
		assertThat(result.statistics.allocationFailures()).isEqualTo(result.failures);
	}

	/**
	 * On the fake driver refusing one unmap in {@value #UNMAPS_REFUSED} over expandable segments, as a failed device
	 * does: a close never fails for the trim beyond it, an acquire or a trim that unmaps fails with the driver's error,
	 * and the runs refused stay mapped and counted, so the books balance to the byte.
	 */
	@Test
	void aDriverRefusingUnmapsFailsOnlyWhatUnmapsAndLosesNothing() throws Exception {
		RefusedUnmaps unmaps = new RefusedUnmaps(UNMAPS_REFUSED, Long.getLong("gpumem.seed", 0) + 77);
		try (PoolLog log = PoolLog.capture(Level.WARNING).quiet()) {
			Result result = run(new Memory(() -> unmaps.open(CAPACITY), true), null, unmaps);
			long logged = RefusedUnmaps.refusalsIn(log.thrown());
			assertThat(result.refusedTrims).as("trims the driver refused").isPositive();
			assertThat(logged).as("refusals beyond a close, logged").isPositive();
			assertThat(unmaps.refused()).as("each refusal thrown at a trim or an acquire, or logged by a close")
				.isEqualTo(unmaps.reported() + logged);
		}
	}

	/**
	 * @param faultProbability the share of allocations refused, or null for none
	 * @param unmaps the driver's refusals of unmaps, ended before the pool closes
	 */
	private Result run(Memory memory, Double faultProbability, RefusedUnmaps unmaps) throws Exception {
		GpuBackend backend = memory.backend().get();
		MemoryAllocator device = memory.expandable() ? backend.virtualMemory().allocator()
				: backend.allocator(MemoryKind.DEVICE);
		TrackingAllocator tracking = new TrackingAllocator(device, false);
		long seed = Long.getLong("gpumem.seed", 0);
		System.out.println("PoolStressTest seed: " + seed + " (replay with -Dgpumem.seed=" + seed + ")");
		MemoryAllocator upstream = (faultProbability != null)
				? FaultInjectingAllocator.withProbability(tracking, faultProbability, seed + 99) : tracking;
		StatisticsAllocator allocator = new StatisticsAllocator(upstream);
		StratifiedMemoryPool pool = new StratifiedMemoryPool(allocator,
				PoolConfig.builder("stress")
					.sizeClasses(SizeClassLadder.geometric(256, 1024 * 1024, 4, 128))
					.maxCachedBuffers(1024, 16)
					.maxCachedBytes(8L << 20)
					.oomRetries((faultProbability != null) ? 0 : 3)
					.build());
		List<Thread> threads = new CopyOnWriteArrayList<>();
		ExecutorService executor = Executors.newFixedThreadPool(THREADS + 1, task -> {
			Thread thread = new Thread(task);
			threads.add(thread);
			return thread;
		});
		AtomicBoolean running = new AtomicBoolean(true);
		AtomicLong failures = new AtomicLong();
		CountDownLatch start = new CountDownLatch(1);
		List<Future<?>> workers = new ArrayList<>();
		for (int t = 0; t < THREADS; t++) {
			long workerSeed = seed + t;
			workers.add(executor.submit(() -> work(pool, workerSeed, start, failures, unmaps)));
		}
		AtomicLong trimmed = new AtomicLong();
		AtomicLong refusedTrims = new AtomicLong();
		Future<?> trimmer = executor.submit(() -> {
			SplittableRandom random = new SplittableRandom(seed + 1234);
			start.await();
			while (running.get()) {
				try {
					long released = pool.trim(random.nextLong(4L << 20));
					assertThat(released).as("what a trim says it released").isNotNegative();
					trimmed.addAndGet(released);
				}
				catch (CudaException ex) {
					unmaps.report(ex);
					refusedTrims.incrementAndGet();
				}
				Thread.sleep(1);
			}
			return null;
		});
		start.countDown();
		for (Future<?> worker : workers) {
			worker.get(5, TimeUnit.MINUTES);
		}
		running.set(false);
		trimmer.get(1, TimeUnit.MINUTES);
		executor.shutdown();
		for (Thread thread : threads) {
			thread.join();
		}

		PoolStatistics stats = pool.statistics();
		long operations = (long) THREADS * OPERATIONS_PER_THREAD;
		assertThat(stats.requests()).isEqualTo(operations);
		assertThat(stats.hits() + stats.misses()).isEqualTo(operations);
		assertThat(stats.returns()).isEqualTo(operations - failures.get());
		assertThat(stats.hits()).isPositive();
		assertThat(stats.trimmedBytes()).isPositive();
		assertThat(trimmed.get()).as("released by trims while the workers ran").isPositive();
		assertThat(stats.inUseBytes()).isZero();
		assertThat(stats.inUseBuffers()).isZero();
		assertThat(stats.cachedBytes()).isEqualTo(stats.reservedBytes());
		assertThat(stats.sizeClasses()).allSatisfy(row -> {
			assertThat(row.inUseBuffers()).isZero();
			assertThat(row.requests()).isEqualTo(row.hits() + row.misses());
		});
		assertThat(allocator.statistics().currentBytes()).isEqualTo(stats.reservedBytes());
		assertThat(tracking.outstandingBytes()).isEqualTo(stats.reservedBytes());
		assertThat(stats.cachedBytes()).isLessThanOrEqualTo(8L << 20);
		unmaps.end();
		pool.close();
		assertThat(allocator.statistics().currentBytes()).isZero();
		assertThat(tracking.outstanding()).isEmpty();
		assertThat(backend.memoryInfo().freeBytes()).isEqualTo(CAPACITY);
		backend.close();
		return new Result(stats, failures.get(), refusedTrims.get());
	}

	/**
	 * Holds up to four buffers at a time; each carries a canary unique to its owner and loan, written at both ends
	 * and at an offset drawn for the loan, and checked before release, so a buffer lent twice, or two buffers lent
	 * over each other, show as a wrong canary.
	 */
	private static Void work(StratifiedMemoryPool pool, long seed, CountDownLatch start, AtomicLong failures,
			RefusedUnmaps unmaps) throws InterruptedException {
		SplittableRandom random = new SplittableRandom(seed);
		PooledBuffer[] held = new PooledBuffer[4];
		long[] canaries = new long[4];
		long[] offsets = new long[4];
		long[] word = new long[1];
		start.await(30, TimeUnit.SECONDS);
		for (int op = 0; op < OPERATIONS_PER_THREAD; op++) {
			int slot = random.nextInt(held.length);
			if (held[slot] != null) {
				verify(held[slot], canaries[slot], offsets[slot], word);
				held[slot].close();
				held[slot] = null;
			}
			long size = random.nextBoolean() ? REPEATED[random.nextInt(REPEATED.length)]
					: 16 + (long) Math.exp(random.nextDouble() * Math.log(1536 * 1024));
			PooledBuffer buffer;
			try {
				buffer = pool.acquire(size);
			}
			catch (GpuOutOfMemoryException ex) {
				failures.incrementAndGet();
				continue;
			}
			catch (CudaException ex) {
				unmaps.report(ex);
				failures.incrementAndGet();
				continue;
			}
			long canary = (seed << 40) ^ op;
			word[0] = canary;
			long offset = (buffer.size() >= 24) ? 8 + random.nextLong((buffer.size() - 16) / 8) * 8 : 0;
			buffer.copyFrom(0, word, 0, 1);
			buffer.copyFrom(offset, word, 0, 1);
			buffer.copyFrom(buffer.size() - 8, word, 0, 1);
			held[slot] = buffer;
			canaries[slot] = canary;
			offsets[slot] = offset;
		}
		for (int slot = 0; slot < held.length; slot++) {
			if (held[slot] != null) {
				verify(held[slot], canaries[slot], offsets[slot], word);
				held[slot].close();
			}
		}
		return null;
	}

	private static void verify(PooledBuffer buffer, long canary, long offset, long[] word) {
		buffer.copyTo(0, word, 0, 1);
		assertThat(word[0]).as("canary at the start of %s", buffer).isEqualTo(canary);
		buffer.copyTo(offset, word, 0, 1);
		assertThat(word[0]).as("canary at %d of %s", offset, buffer).isEqualTo(canary);
		buffer.copyTo(buffer.size() - 8, word, 0, 1);
		assertThat(word[0]).as("canary at the end of %s", buffer).isEqualTo(canary);
	}

	private record Result(PoolStatistics statistics, long failures, long refusedTrims) {
	}

	record Memory(Supplier<GpuBackend> backend, boolean expandable) {
	}


}
