package io.gpumem.admission;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.UnaryOperator;
import java.util.logging.Level;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaException;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.GpuRetryOutOfMemoryException;
import io.gpumem.pool.HeldAllocator;
import io.gpumem.pool.LeakDetection;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PoolLog;
import io.gpumem.pool.PoolSetup;
import io.gpumem.pool.PoolStatistics;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.RefusedUnmaps;
import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The liveness workload, on the host backend and the fake driver, each arena: threads with random holds and waits,
 * requests admitted by their bytes, acquires that wait and are told to give way, buffers and permits dropped by
 * threads that end, trims, and the pool closed under the last of them. Every request completes or fails with its
 * named reason within its wait (and a margin for the machine; only a hang runs it out), the invariants of the
 * statistics hold in every read, and the books are exact at the end. The seed is printed; {@code -Dgpumem.seed=}
 * replays each thread's choices.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class LivenessWorkloadTest {

	private static final long MIB = 1L << 20;

	private static final int THREADS = 12;

	private static final int REQUESTS = 150;

	private static final long CAPACITY = 96 * MIB;

	/** One unmap in this many is refused where the driver refuses some. */
	private static final int UNMAPS_REFUSED = 10;

	/** {@code max-cached} where the driver refuses unmaps: small, so that closes give memory back. */
	private static final long REFUSING_MAX_CACHED = 8 * MIB;

	/** What the machine may add to a wait before a request is called hung: a slow CI core, a garbage collection. */
	private static final long MARGIN_NANOS = TimeUnit.SECONDS.toNanos(10);

	private final ExecutorService threads = Executors.newCachedThreadPool();

	private GpuBackend backend;

	private StratifiedMemoryPool pool;

	@AfterEach
	void close() {
		this.threads.shutdownNow();
		if (this.pool != null) {
			this.pool.close();
			this.backend.close();
		}
	}

	@ParameterizedTest
	@EnumSource(PoolSetup.class)
	void everyRequestEndsWithinItsWaitAndTheBooksAreExact(PoolSetup setup) throws Exception {
		long seed = Long.getLong("gpumem.seed", System.nanoTime());
		System.out.println("LivenessWorkloadTest " + setup + " seed: " + seed + " (replay with -Dgpumem.seed=" + seed
				+ ")");
		run(setup, setup.open(CAPACITY), RefusedUnmaps.NONE, (config) -> config, seed);
	}

	/**
	 * The same workload over expandable segments on the fake driver refusing one unmap in {@value #UNMAPS_REFUSED}, as
	 * a failed device does, with {@code max-cached} at {@value #REFUSING_MAX_CACHED} bytes so that closes give memory
	 * back too: a request or trim that unmaps may fail with the driver's error, within its wait, and a close logs it;
	 * every refusal reaches a caller or the pool's log, and the runs refused stay counted, so the books are exact.
	 */
	@Test
	void everyRequestEndsWithinItsWaitAndTheBooksAreExactWhileTheDriverRefusesUnmaps() throws Exception {
		long seed = Long.getLong("gpumem.seed", System.nanoTime());
		System.out.println("LivenessWorkloadTest refusing unmaps seed: " + seed + " (replay with -Dgpumem.seed=" + seed
				+ ")");
		RefusedUnmaps unmaps = new RefusedUnmaps(UNMAPS_REFUSED, seed - 1);
		try (PoolLog log = PoolLog.capture(Level.WARNING).quiet()) {
			run(PoolSetup.CUDA_EXPANDABLE, unmaps.open(CAPACITY), unmaps,
					(config) -> config.maxCachedBytes(REFUSING_MAX_CACHED), seed);
			long logged = RefusedUnmaps.refusalsIn(log.thrown());
			assertThat(logged).as("refusals beyond a close, logged, seed %d", seed).isPositive();
			assertThat(unmaps.refused()).as("unmaps refused, seed %d", seed)
				.isEqualTo(unmaps.reported() + logged);
		}
	}

	/**
	 * Runs the workload on {@code backend} as {@code setup} draws, the driver refusing {@code unmaps}, the pool
	 * configured further by {@code tuning}.
	 */
	private void run(PoolSetup setup, GpuBackend backend, RefusedUnmaps unmaps,
			UnaryOperator<PoolConfig.Builder> tuning, long seed) throws Exception {
		this.backend = backend;
		HeldAllocator held = new HeldAllocator(setup.allocator(this.backend));
		this.pool = new StratifiedMemoryPool(held, tuning.apply(PoolConfig.builder("device")
			.maxWait(Duration.ofMillis(200))
			.leakDetection(LeakDetection.SIMPLE))
			.build());
		GpuAdmission admission = new GpuAdmission("device 0", 6, Duration.ofMillis(300), this.pool);
		Outcomes outcomes = new Outcomes();
		AtomicBoolean running = new AtomicBoolean(true);
		Future<Long> reader = this.threads.submit(() -> readWhile(running, held, admission));
		List<Future<?>> workers = new ArrayList<>();
		for (int t = 0; t < THREADS; t++) {
			SplittableRandom random = new SplittableRandom(seed + t);
			workers.add(this.threads.submit(() -> {
				for (int r = 0; r < REQUESTS; r++) {
					request(random, admission, outcomes, unmaps);
				}
				return null;
			}));
		}
		try {
			for (Future<?> worker : workers) {
				worker.get(4, TimeUnit.MINUTES);
			}
		}
		finally {
			running.set(false);
			unmaps.end();
		}
		assertThat(reader.get(1, TimeUnit.MINUTES)).as("statistics reads, seed %d", seed).isPositive();
		System.out.println("LivenessWorkloadTest " + setup + ": " + outcomes);
		assertThat(outcomes.hung).as("requests past their wait and the margin, seed %d", seed).isEmpty();
		assertThat(outcomes.completed.sum()).as("completed, seed %d", seed).isPositive();
		await("dropped buffers and permits reclaimed and counted, seed " + seed).atMost(Duration.ofMinutes(1))
			.untilAsserted(() -> {
				System.gc();
				this.pool.trim(Long.MAX_VALUE);
				assertReclaimed(admission, outcomes);
			});
		AdmissionStatistics books = admission.statistics();
		assertThat(books.claimedBytes()).isZero();
		assertThat(books.lentBytes()).isZero();
		assertThat(books.waiting()).isZero();
		PoolStatistics statistics = this.pool.statistics();
		assertThat(statistics.reservedBytes()).isEqualTo(held.held());
		assertThat(this.pool.trim(0)).isEqualTo(statistics.reservedBytes() - this.pool.statistics().reservedBytes());
		threeRequestsThatMustGiveWayComplete(seed);
		waitersEndWhenThePoolCloses(admission, seed);
		assertThat(held.held()).as("held after close, seed %d", seed).isZero();
	}

	/**
	 * Asserts that every buffer and permit dropped came back and was counted as a leak. The maintenance may reclaim
	 * beside the test, and a reclaim counts its leak once its memory is back, so the two are awaited together.
	 */
	private void assertReclaimed(GpuAdmission admission, Outcomes outcomes) {
		PoolStatistics statistics = this.pool.statistics();
		AdmissionStatistics books = admission.statistics();
		assertThat(statistics.inUseBytes()).as("in use").isZero();
		assertThat(books.active()).as("permits open").isZero();
		assertThat(statistics.leakedBuffers()).as("buffers dropped").isEqualTo(outcomes.droppedBuffers.sum());
		assertThat(books.leaked()).as("permits dropped").isEqualTo(outcomes.droppedPermits.sum());
	}

	/**
	 * After the workload, with its dropped buffers reclaimed, three requests that each hold a quarter of the device and
	 * ask for two fifths more still complete: giving way works as before.
	 */
	private void threeRequestsThatMustGiveWayComplete(long seed) throws Exception {
		CountDownLatch holding = new CountDownLatch(3);
		List<Future<Integer>> requests = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			requests.add(this.threads.submit(() -> {
				for (int run = 1;; run++) {
					try (PooledBuffer first = this.pool.acquire(CAPACITY / 4, Duration.ofSeconds(30))) {
						holding.countDown();
						holding.await();
						try (PooledBuffer more = this.pool.acquire(CAPACITY * 2 / 5, Duration.ofSeconds(30))) {
							return run;
						}
					}
					catch (GpuRetryOutOfMemoryException told) {
						// runs again, behind those it gave way to
					}
				}
			}));
		}
		for (Future<Integer> request : requests) {
			assertThat(request.get(2, TimeUnit.MINUTES)).as("runs of a request that gives way, seed %d", seed)
				.isPositive();
		}
	}

	/** A request waiting in line for memory and one waiting for admission both end once the pool closes. */
	private void waitersEndWhenThePoolCloses(GpuAdmission admission, long seed) throws Exception {
		PooledBuffer most = this.pool.acquire(CAPACITY * 3 / 4);
		Future<?> acquire = this.threads.submit(() -> this.pool.acquire(CAPACITY / 2, Duration.ofMinutes(1)));
		Future<?> enter = this.threads.submit(() -> admission.enter(CAPACITY / 2, Duration.ofMinutes(1)));
		await().atMost(Duration.ofMinutes(1))
			.until(() -> this.pool.statistics().memoryWaits().waits() > 0 && admission.statistics().waiting() == 1);
		this.pool.close();
		for (Future<?> waiter : List.of(acquire, enter)) {
			assertThat(waiter).as("a waiter when the pool closed, seed %d", seed)
				.failsWithin(Duration.ofSeconds(30))
				.withThrowableThat()
				.havingCause()
				.isInstanceOf(IllegalStateException.class)
				.withMessage("pool 'device' is closed");
		}
		most.close();
	}

	/** One request of a kind the random draws, timed against its wait. */
	private void request(SplittableRandom random, GpuAdmission admission, Outcomes outcomes, RefusedUnmaps unmaps) {
		int kind = random.nextInt(100);
		long start = System.nanoTime();
		long waitNanos;
		String name;
		try {
			if (kind < 40) {
				name = "admitted";
				waitNanos = admitted(random, admission);
			}
			else if (kind < 80) {
				name = "waiting";
				waitNanos = waiting(random);
			}
			else if (kind < 88) {
				name = "dropped";
				waitNanos = dropped(random, admission, outcomes, unmaps);
			}
			else if (kind < 95) {
				name = "trim";
				waitNanos = 0;
				this.pool.trim(random.nextLong(32 * MIB));
			}
			else {
				name = "no wait";
				waitNanos = 0;
				this.pool.acquire(1 + random.nextLong(4 * MIB), Duration.ZERO).close();
			}
			outcomes.completed.increment();
		}
		catch (GpuAdmissionException refused) {
			name = "refused " + refused.refused();
			waitNanos = TimeUnit.MILLISECONDS.toNanos(300);
			outcomes.count(name);
		}
		catch (GpuRetryOutOfMemoryException told) {
			name = "told to give way";
			waitNanos = TimeUnit.MILLISECONDS.toNanos(300);
			outcomes.count(name);
		}
		catch (GpuOutOfMemoryException outOfMemory) {
			name = "out of memory";
			waitNanos = TimeUnit.MILLISECONDS.toNanos(400);
			assertThat(outOfMemory.getMessage()).startsWith("Out of DEVICE memory: tried to allocate");
			outcomes.count(name);
		}
		catch (CudaException refused) {
			unmaps.report(refused);
			name = "unmap refused";
			waitNanos = TimeUnit.MILLISECONDS.toNanos(3 * 2 * 200);
			outcomes.count(name);
		}
		long took = System.nanoTime() - start;
		if (took > waitNanos + MARGIN_NANOS) {
			outcomes.hung.add(name + " took " + TimeUnit.NANOSECONDS.toMillis(took) + " ms");
		}
	}

	/** Enters with two buffers' bytes, fills and checks them, holds them a while; answers the longest it may wait. */
	private long admitted(SplittableRandom random, GpuAdmission admission) {
		long first = 1 + random.nextLong(12 * MIB);
		long second = 1 + random.nextLong(12 * MIB);
		try (GpuAdmission.Permit permit = admission.enter(this.pool.blockSize(first) + this.pool.blockSize(second),
				Duration.ofMillis(300));
				PooledBuffer a = permit.acquire(first);
				PooledBuffer b = permit.acquire(second)) {
			byte mark = (byte) random.nextInt();
			a.fill(mark);
			b.fill(mark);
			hold(random);
			byte[] end = new byte[1];
			a.copyTo(a.size() - 1, end, 0, 1);
			assertThat(end[0]).as("the last byte of a buffer lent on a permit").isEqualTo(mark);
		}
		return TimeUnit.MILLISECONDS.toNanos(300 + 2 * 300);
	}

	/**
	 * Holds one buffer and waits for a second, closing what it holds and running again when told to give way, at most
	 * three runs; answers the longest it may wait.
	 */
	private long waiting(SplittableRandom random) {
		long first = 1 + random.nextLong(16 * MIB);
		long second = 1 + random.nextLong(24 * MIB);
		for (int run = 1;; run++) {
			try (PooledBuffer a = this.pool.acquire(first); PooledBuffer b = this.pool.acquire(second)) {
				hold(random);
				return 3 * TimeUnit.MILLISECONDS.toNanos(2 * 200);
			}
			catch (GpuRetryOutOfMemoryException told) {
				if (run == 3) {
					throw told;
				}
			}
		}
	}

	/** A thread of its own acquires a buffer, or a permit with one, and ends without closing them. */
	private long dropped(SplittableRandom random, GpuAdmission admission, Outcomes outcomes,
			RefusedUnmaps unmaps) {
		boolean permit = random.nextBoolean();
		long bytes = 1 + random.nextLong(4 * MIB);
		Thread leaking = new Thread(() -> {
			try {
				if (permit) {
					GpuAdmission.Permit dropped = admission.enter(this.pool.blockSize(bytes), Duration.ofMillis(300));
					outcomes.droppedPermits.increment();
					dropped.acquire(bytes).fill((byte) 1);
				}
				else {
					this.pool.acquire(bytes).fill((byte) 1);
				}
				outcomes.droppedBuffers.increment();
			}
			catch (GpuAdmissionException | GpuOutOfMemoryException refused) {
				outcomes.count("dropped, refused first");
			}
			catch (CudaException refused) {
				unmaps.report(refused);
				outcomes.count("dropped, unmap refused first");
			}
		});
		leaking.start();
		try {
			leaking.join();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		return TimeUnit.MILLISECONDS.toNanos(300 + 200);
	}

	private static void hold(SplittableRandom random) {
		if (random.nextBoolean()) {
			LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(random.nextInt(2_000)));
		}
		else {
			long until = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(random.nextInt(500));
			while (System.nanoTime() < until) {
				Thread.onSpinWait();
			}
		}
	}

	/** Reads the statistics while {@code running}, checking their invariants in every read; answers how many. */
	private long readWhile(AtomicBoolean running, HeldAllocator held, GpuAdmission admission) {
		long reads = 0;
		while (running.get()) {
			held.mark();
			PoolStatistics statistics = this.pool.statistics();
			long most = held.mostSinceMark();
			AdmissionStatistics books = admission.statistics();
			reads++;
			assertThat(statistics.inUseBytes() + statistics.cachedBytes()).as("read %d", reads)
				.isEqualTo(statistics.reservedBytes());
			assertThat(statistics.inUseBytes()).as("in use, read %d", reads).isNotNegative();
			assertThat(statistics.reservedBytes()).as("reserved, read %d", reads).isLessThanOrEqualTo(most);
			assertThat(books.claimedBytes()).as("claimed, read %d", reads).isBetween(0L, CAPACITY);
			assertThat(books.active()).as("permits open, read %d", reads).isBetween(0, 6);
			assertThat(books.lentBytes()).as("lent on permits, read %d", reads).isNotNegative();
			LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200));
		}
		return reads;
	}

	/** How the requests ended. */
	private static final class Outcomes {

		final LongAdder completed = new LongAdder();

		final LongAdder droppedBuffers = new LongAdder();

		final LongAdder droppedPermits = new LongAdder();

		final Map<String, LongAdder> failed = new ConcurrentHashMap<>();

		final List<String> hung = new CopyOnWriteArrayList<>();

		void count(String reason) {
			this.failed.computeIfAbsent(reason, (key) -> new LongAdder()).increment();
		}

		@Override
		public String toString() {
			return this.completed.sum() + " completed, failed " + this.failed + ", dropped " + this.droppedBuffers.sum()
					+ " buffers (" + this.droppedPermits.sum() + " on permits)";
		}

	}

}
