package io.gpumem.pool;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.admission.GpuAdmissionException;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryKind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Admission by bytes: claims admitted in order of arrival while they fit, all or nothing, each request's buffers
 * drawn from its claim, and the books exact at the end.
 */
class MemoryClaimTest {

	private static final long MIB = 1L << 20;

	/** Long enough that only a hang runs it out. */
	private static final Duration FOREVER = Duration.ofHours(1);

	private final ExecutorService executor = Executors.newCachedThreadPool();

	private final List<AutoCloseable> resources = new ArrayList<>();

	@AfterEach
	void close() throws Exception {
		this.executor.shutdownNow();
		for (int i = this.resources.size() - 1; i >= 0; i--) {
			this.resources.get(i).close();
		}
	}

	private StratifiedMemoryPool pool(long capacity) {
		HostBackend backend = new HostBackend(capacity);
		StratifiedMemoryPool pool = new StratifiedMemoryPool(backend.allocator(MemoryKind.DEVICE),
				PoolConfig.builder("device").build());
		this.resources.add(backend);
		this.resources.add(pool);
		return pool;
	}

	@Test
	void twoRequestsEachNeedingSixtyPercentOfTheDeviceRunOneAfterTheOtherWithoutATimeout() throws Exception {
		StratifiedMemoryPool pool = pool(100 * MIB);
		CountDownLatch firstHolds = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		List<String> order = new CopyOnWriteArrayList<>();
		Future<?> first = this.executor.submit(() -> {
			try (MemoryClaim claim = pool.claim(60 * MIB, FOREVER)) {
				List<PooledBuffer> buffers = List.of(claim.acquire(20 * MIB), claim.acquire(20 * MIB),
						claim.acquire(20 * MIB));
				order.add("first holds its three buffers");
				firstHolds.countDown();
				release.await();
				buffers.forEach(PooledBuffer::close);
				order.add("first done");
			}
			return null;
		});
		firstHolds.await();
		Future<?> second = this.executor.submit(() -> {
			try (MemoryClaim claim = pool.claim(60 * MIB, FOREVER)) {
				order.add("second admitted");
				try (PooledBuffer a = claim.acquire(20 * MIB); PooledBuffer b = claim.acquire(20 * MIB);
						PooledBuffer c = claim.acquire(20 * MIB)) {
					order.add("second holds its three buffers");
				}
			}
			return null;
		});
		await().atMost(Duration.ofMinutes(1)).until(() -> pool.statistics().claims().waiting() == 1);
		assertThat(pool.statistics().inUseBytes()).as("the second holds nothing while it waits").isEqualTo(60 * MIB);
		release.countDown();
		first.get(1, TimeUnit.MINUTES);
		second.get(1, TimeUnit.MINUTES);
		assertThat(order).containsExactly("first holds its three buffers", "first done", "second admitted",
				"second holds its three buffers");
		PoolStatistics.Claims claims = pool.statistics().claims();
		assertThat(claims).isEqualTo(new PoolStatistics.Claims(0, 0, 0, 0, 2, 1, 0, 0, claims.waitNanos()));
		assertThat(pool.statistics().allocationFailures()).isZero();
	}

	@Test
	void aClaimLargerThanTheDeviceIsRefusedAtOnceNamingTheCapacity() {
		StratifiedMemoryPool pool = pool(1L << 30);
		assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> pool.claim(2L << 30, FOREVER))
			.withMessageContaining("larger than the device's capacity, refused at once")
			.satisfies((ex) -> assertThat(ex.diagnostic().requestedBytes()).isEqualTo(2L << 30));
		assertThat(pool.statistics().claims().refusals()).isEqualTo(1);
		assertThat(pool.statistics().claims().waits()).isZero();
	}

	/**
	 * The stated bound: a claim waits only for the memory of the claims admitted before it; none that arrives after
	 * it goes first, though each would fit.
	 */
	@Test
	void aLargeClaimBehindAThousandSmallOnesIsAdmittedOnceEnoughOfThemCloseAndBeforeAnyLaterOne() throws Exception {
		StratifiedMemoryPool pool = pool(1024 * MIB);
		List<MemoryClaim> small = new ArrayList<>();
		for (int i = 0; i < 1000; i++) {
			small.add(pool.claim(MIB, Duration.ZERO));
		}
		AtomicLong closedWhenLargeAdmitted = new AtomicLong(-1);
		AtomicLong closed = new AtomicLong();
		Future<MemoryClaim> large = this.executor.submit(() -> {
			MemoryClaim claim = pool.claim(600 * MIB, FOREVER);
			closedWhenLargeAdmitted.set(closed.get());
			return claim;
		});
		await().atMost(Duration.ofMinutes(1)).until(() -> pool.statistics().claims().waiting() == 1);
		List<Future<Long>> later = new ArrayList<>();
		for (int i = 0; i < 100; i++) {
			later.add(this.executor.submit(() -> {
				try (MemoryClaim claim = pool.claim(MIB, FOREVER)) {
					return pool.statistics().claims().claimedBytes();
				}
			}));
		}
		await().atMost(Duration.ofMinutes(1)).until(() -> pool.statistics().claims().waiting() == 101);
		for (MemoryClaim claim : small) {
			closed.incrementAndGet();
			claim.close();
		}
		MemoryClaim admittedLarge = large.get(1, TimeUnit.MINUTES);
		for (Future<Long> each : later) {
			assertThat(each.get(1, TimeUnit.MINUTES)).as("claimed when a later claim got in: the large one with it")
				.isGreaterThanOrEqualTo(601 * MIB);
		}
		admittedLarge.close();
		assertThat(closedWhenLargeAdmitted.get()).as("small claims closed when the large one got in")
			.isBetween(576L, 1000L);
		PoolStatistics.Claims claims = pool.statistics().claims();
		assertThat(claims.claimedBytes()).isZero();
		assertThat(claims.open()).isZero();
		assertThat(claims.admitted()).isEqualTo(1101);
		assertThat(claims.timeouts()).isZero();
	}

	@Test
	void aWaitThatRunsOutIsAnAdmissionExceptionWithARetryAfterAndLosesNothing() {
		StratifiedMemoryPool pool = pool(64 * MIB);
		try (MemoryClaim held = pool.claim(48 * MIB, Duration.ZERO)) {
			assertThatExceptionOfType(GpuAdmissionException.class).isThrownBy(() -> pool.claim(32 * MIB, Duration.ZERO))
				.withMessageStartingWith("claim of 32.00 MiB on pool 'device' not admitted within 0 ms: 48.00 MiB claimed by 1 "
						+ "requests")
				.satisfies((ex) -> assertThat(ex.retryAfter()).isGreaterThanOrEqualTo(Duration.ofSeconds(1)));
			assertThatExceptionOfType(GpuAdmissionException.class)
				.isThrownBy(() -> pool.claim(32 * MIB, Duration.ofMillis(20)));
			PoolStatistics.Claims claims = pool.statistics().claims();
			assertThat(claims.claimedBytes()).isEqualTo(48 * MIB);
			assertThat(claims.timeouts()).isEqualTo(2);
			assertThat(claims.waiting()).isZero();
		}
		try (MemoryClaim after = pool.claim(32 * MIB, Duration.ZERO)) {
			assertThat(after.remainingBytes()).isEqualTo(32 * MIB);
		}
	}

	@Test
	void memoryLentOutsideClaimsCountsAgainstThem() {
		StratifiedMemoryPool pool = pool(64 * MIB);
		try (PooledBuffer outside = pool.acquire(40 * MIB)) {
			assertThatExceptionOfType(GpuAdmissionException.class).isThrownBy(() -> pool.claim(32 * MIB, Duration.ZERO))
				.withMessageContaining("40.00 MiB lent outside claims");
		}
		pool.claim(32 * MIB, Duration.ZERO).close();
	}

	@Test
	void aRequestTakesNoMoreThanItClaimedAndGetsBackWhatItCloses() {
		StratifiedMemoryPool pool = pool(64 * MIB);
		MemoryClaim claim = pool.claim(MIB, Duration.ZERO);
		PooledBuffer a = claim.acquire(512 * 1024);
		PooledBuffer b = claim.acquire(512 * 1024);
		assertThat(claim.remainingBytes()).isZero();
		assertThatIllegalStateException().isThrownBy(() -> claim.acquire(1))
			.withMessageContaining("does not fit in the claim of 1048576 bytes on pool 'device', 1048576 of which are lent");
		a.close();
		a.close();
		assertThat(claim.remainingBytes()).isEqualTo(512 * 1024);
		PooledBuffer c = claim.acquire(512 * 1024);
		assertThat(pool.statistics().claims().lentBytes()).isEqualTo(MIB);
		claim.close();
		assertThat(pool.statistics().claims().lentBytes()).as("buffers of a closed claim are lent as any other").isZero();
		assertThat(pool.statistics().inUseBytes()).isEqualTo(MIB);
		assertThatIllegalStateException().isThrownBy(() -> claim.acquire(1)).withMessageContaining("is closed");
		b.close();
		c.close();
		assertThat(pool.statistics().inUseBytes()).isZero();
		assertThat(pool.statistics().claims()).isEqualTo(new PoolStatistics.Claims(0, 0, 0, 0, 1, 0, 0, 0, 0));
	}

	@Test
	void aClaimClosedAfterStreamWorkIsReleasedOnceTheWorkIsDone() {
		StratifiedMemoryPool pool = pool(64 * MIB);
		ManualStream stream = new ManualStream();
		MemoryClaim claim = pool.claim(48 * MIB, Duration.ZERO);
		claim.acquire(48 * MIB).closeAfter(stream);
		claim.closeAfter(stream);
		assertThat(pool.statistics().claims().claimedBytes()).isEqualTo(48 * MIB);
		assertThatExceptionOfType(GpuAdmissionException.class).isThrownBy(() -> pool.claim(48 * MIB, Duration.ZERO));
		stream.finish();
		try (MemoryClaim next = pool.claim(48 * MIB, Duration.ZERO)) {
			assertThat(claim.isClosed()).isTrue();
			assertThat(next.acquire(48 * MIB).size()).isEqualTo(48 * MIB);
		}
	}

	@Test
	void aWaitingClaimFailsWhenItsPoolCloses() throws Exception {
		StratifiedMemoryPool pool = pool(64 * MIB);
		MemoryClaim held = pool.claim(48 * MIB, Duration.ZERO);
		CompletableFuture<MemoryClaim> waiting = CompletableFuture.supplyAsync(() -> pool.claim(48 * MIB, FOREVER),
				this.executor);
		await().atMost(Duration.ofMinutes(1)).until(() -> pool.statistics().claims().waiting() == 1);
		pool.close();
		assertThat(waiting).failsWithin(Duration.ofMinutes(1))
			.withThrowableThat()
			.havingCause()
			.isInstanceOf(IllegalStateException.class)
			.withMessage("pool 'device' is closed");
		held.close();
	}

	/**
	 * Many request threads claim, fill and check their buffers, and close: no claim is ever admitted beyond the
	 * device, no request fails once admitted, and the books are exact at the end.
	 */
	@Test
	void concurrentClaimsNeverExceedTheDeviceNorFailOnceAdmitted() throws Exception {
		long capacity = 256 * MIB;
		StratifiedMemoryPool pool = pool(capacity);
		AtomicBoolean running = new AtomicBoolean(true);
		AtomicLong peakClaimed = new AtomicLong();
		Future<?> watcher = this.executor.submit(() -> {
			while (running.get()) {
				peakClaimed.accumulateAndGet(pool.statistics().claims().claimedBytes(), Math::max);
				Thread.onSpinWait();
			}
		});
		long seed = System.nanoTime();
		List<Future<Long>> workers = new ArrayList<>();
		for (int t = 0; t < 16; t++) {
			SplittableRandom random = new SplittableRandom(seed + t);
			workers.add(this.executor.submit(() -> {
				long served = 0;
				for (int request = 0; request < 200; request++) {
					int buffers = 1 + random.nextInt(3);
					long[] sizes = new long[buffers];
					long claimed = 0;
					for (int i = 0; i < buffers; i++) {
						sizes[i] = 1 + random.nextLong(24 * MIB);
						claimed += pool.blockSize(sizes[i]);
					}
					try (MemoryClaim claim = pool.claim(claimed, FOREVER)) {
						List<PooledBuffer> held = new ArrayList<>();
						for (long size : sizes) {
							PooledBuffer buffer = claim.acquire(size);
							buffer.copyFrom(buffer.size() - 1, new byte[] { (byte) request }, 0, 1);
							held.add(buffer);
						}
						byte[] last = new byte[1];
						for (PooledBuffer buffer : held) {
							buffer.copyTo(buffer.size() - 1, last, 0, 1);
							assertThat(last[0]).isEqualTo((byte) request);
							buffer.close();
						}
						served++;
					}
				}
				return served;
			}));
		}
		long served = 0;
		for (Future<Long> worker : workers) {
			served += worker.get(5, TimeUnit.MINUTES);
		}
		running.set(false);
		watcher.get(1, TimeUnit.MINUTES);
		assertThat(served).as("seed %d", seed).isEqualTo(16 * 200);
		assertThat(peakClaimed.get()).isPositive().isLessThanOrEqualTo(capacity);
		PoolStatistics statistics = pool.statistics();
		assertThat(statistics.allocationFailures()).isZero();
		assertThat(statistics.inUseBytes()).isZero();
		assertThat(statistics.claims().claimedBytes()).isZero();
		assertThat(statistics.claims().lentBytes()).isZero();
		assertThat(statistics.claims().open()).isZero();
		assertThat(statistics.claims().admitted()).isEqualTo(16 * 200);
	}

}
