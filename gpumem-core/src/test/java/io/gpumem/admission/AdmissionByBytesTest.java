package io.gpumem.admission;

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
import java.util.concurrent.atomic.LongAdder;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.GpuRetryOutOfMemoryException;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.ManualStream;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * Admission by bytes: requests let in in order of arrival while their bytes fit, all or nothing, each request's
 * buffers drawn from its permit, and the books exact at the end.
 */
class AdmissionByBytesTest {

	private static final long MIB = 1L << 20;

	/** Long enough that only a hang runs it out. */
	private static final Duration FOREVER = Duration.ofHours(1);

	private final ExecutorService executor = Executors.newCachedThreadPool();

	private final List<AutoCloseable> resources = new ArrayList<>();

	private StratifiedMemoryPool pool;

	@AfterEach
	void close() throws Exception {
		this.executor.shutdownNow();
		for (int i = this.resources.size() - 1; i >= 0; i--) {
			this.resources.get(i).close();
		}
	}

	private GpuAdmission admission(long capacity) {
		HostBackend backend = new HostBackend(capacity);
		this.pool = new StratifiedMemoryPool(backend.allocator(MemoryKind.DEVICE), PoolConfig.builder("device").build());
		this.resources.add(backend);
		this.resources.add(this.pool);
		return new GpuAdmission("device 0", 0, FOREVER, this.pool);
	}

	@Test
	void twoRequestsEachNeedingSixtyPercentOfTheDeviceRunOneAfterTheOtherWithoutATimeout() throws Exception {
		GpuAdmission admission = admission(100 * MIB);
		CountDownLatch firstHolds = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		List<String> order = new CopyOnWriteArrayList<>();
		Future<?> first = this.executor.submit(() -> {
			try (GpuAdmission.Permit permit = admission.enter(60 * MIB, FOREVER)) {
				List<PooledBuffer> buffers = List.of(permit.acquire(20 * MIB), permit.acquire(20 * MIB),
						permit.acquire(20 * MIB));
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
			try (GpuAdmission.Permit permit = admission.enter(60 * MIB, FOREVER)) {
				order.add("second admitted");
				try (PooledBuffer a = permit.acquire(20 * MIB); PooledBuffer b = permit.acquire(20 * MIB);
						PooledBuffer c = permit.acquire(20 * MIB)) {
					order.add("second holds its three buffers");
				}
			}
			return null;
		});
		await().atMost(Duration.ofMinutes(1)).until(() -> admission.statistics().waiting() == 1);
		assertThat(this.pool.statistics().inUseBytes()).as("the second holds nothing while it waits")
			.isEqualTo(60 * MIB);
		release.countDown();
		first.get(1, TimeUnit.MINUTES);
		second.get(1, TimeUnit.MINUTES);
		assertThat(order).containsExactly("first holds its three buffers", "first done", "second admitted",
				"second holds its three buffers");
		AdmissionStatistics statistics = admission.statistics();
		assertThat(statistics).isEqualTo(new AdmissionStatistics("device 0", 0, 0, 0, 0, 0, 2, 1, 0, 0, 0,
				statistics.waitNanos()));
		assertThat(this.pool.statistics().allocationFailures()).isZero();
	}

	@Test
	void aRequestLargerThanTheDeviceIsRefusedAtOnceNamingTheCapacity() {
		GpuAdmission admission = admission(1L << 30);
		assertThatExceptionOfType(GpuOutOfMemoryException.class)
			.isThrownBy(() -> admission.enter(2L << 30, FOREVER))
			.withMessageContaining("larger than the device's capacity, refused at once")
			.satisfies((ex) -> assertThat(ex.diagnostic().requestedBytes()).isEqualTo(2L << 30));
		assertThat(admission.statistics().refusals()).isEqualTo(1);
		assertThat(admission.statistics().waits()).isZero();
	}

	/**
	 * The stated bound: a request waits only for the memory of those let in before it; none that arrives after it goes
	 * first, though each would fit: a newcomer that finds room and a line is refused at once where it may not wait.
	 */
	@Test
	void aLargeRequestBehindAThousandSmallOnesIsLetInOnceEnoughOfThemCloseAndBeforeAnyLaterOne() throws Exception {
		GpuAdmission admission = admission(1024 * MIB);
		List<GpuAdmission.Permit> small = new ArrayList<>();
		for (int i = 0; i < 1000; i++) {
			small.add(admission.enter(MIB, Duration.ZERO));
		}
		AtomicLong closedWhenLargeAdmitted = new AtomicLong(-1);
		AtomicLong closed = new AtomicLong();
		Future<GpuAdmission.Permit> large = this.executor.submit(() -> {
			GpuAdmission.Permit permit = admission.enter(600 * MIB, FOREVER);
			closedWhenLargeAdmitted.set(closed.get());
			return permit;
		});
		await().atMost(Duration.ofMinutes(1)).until(() -> admission.statistics().waiting() == 1);
		List<Future<?>> later = new ArrayList<>();
		for (int i = 0; i < 100; i++) {
			later.add(this.executor.submit(() -> {
				admission.enter(MIB, FOREVER).close();
				return null;
			}));
		}
		await().atMost(Duration.ofMinutes(1)).until(() -> admission.statistics().waiting() == 101);
		for (int i = 0; i < 300; i++) {
			closed.incrementAndGet();
			small.remove(small.size() - 1).close();
		}
		assertThatExceptionOfType(GpuAdmissionException.class).as("a newcomer with 300 MiB free, behind the line")
			.isThrownBy(() -> admission.enter(MIB, Duration.ZERO))
			.satisfies((ex) -> assertThat(ex.refused()).isEqualTo(GpuAdmissionException.Refused.BYTES));
		assertThat(admission.statistics().waiting()).as("none of the later ones got in").isEqualTo(101);
		for (GpuAdmission.Permit permit : small) {
			closed.incrementAndGet();
			permit.close();
		}
		GpuAdmission.Permit admittedLarge = large.get(1, TimeUnit.MINUTES);
		for (Future<?> each : later) {
			each.get(1, TimeUnit.MINUTES);
		}
		admittedLarge.close();
		assertThat(closedWhenLargeAdmitted.get()).as("small requests closed when the large one got in")
			.isBetween(576L, 1000L);
		AdmissionStatistics statistics = admission.statistics();
		assertThat(statistics.claimedBytes()).isZero();
		assertThat(statistics.active()).isZero();
		assertThat(statistics.admitted()).isEqualTo(1101);
		assertThat(statistics.timeouts()).isEqualTo(1);
	}

	@Test
	void aWaitThatRunsOutIsAnAdmissionExceptionWithARetryAfterAndLosesNothing() {
		GpuAdmission admission = admission(64 * MIB);
		try (GpuAdmission.Permit held = admission.enter(48 * MIB, Duration.ZERO)) {
			assertThatExceptionOfType(GpuAdmissionException.class)
				.isThrownBy(() -> admission.enter(32 * MIB, Duration.ZERO))
				.withMessageStartingWith("request for 32.00 MiB of pool 'device' on device 0 not admitted within 0 ms: "
						+ "48.00 MiB held by 1 admitted requests")
				.satisfies((ex) -> assertThat(ex.retryAfter()).isGreaterThanOrEqualTo(Duration.ofSeconds(1)))
				.satisfies((ex) -> assertThat(ex.refused()).isEqualTo(GpuAdmissionException.Refused.BYTES));
			assertThatExceptionOfType(GpuAdmissionException.class)
				.isThrownBy(() -> admission.enter(32 * MIB, Duration.ofMillis(20)));
			AdmissionStatistics statistics = admission.statistics();
			assertThat(statistics.claimedBytes()).isEqualTo(48 * MIB);
			assertThat(statistics.timeouts()).isEqualTo(2);
			assertThat(statistics.waiting()).isZero();
		}
		try (GpuAdmission.Permit after = admission.enter(32 * MIB, Duration.ZERO)) {
			assertThat(after.remainingBytes()).isEqualTo(32 * MIB);
		}
	}

	@Test
	void memoryLentOutsideAdmissionCountsAgainstIt() {
		GpuAdmission admission = admission(64 * MIB);
		try (PooledBuffer outside = this.pool.acquire(40 * MIB)) {
			assertThatExceptionOfType(GpuAdmissionException.class)
				.isThrownBy(() -> admission.enter(32 * MIB, Duration.ZERO))
				.withMessageContaining("40.00 MiB lent outside them");
		}
		admission.enter(32 * MIB, Duration.ZERO).close();
	}

	@Test
	void aRequestTakesNoMoreThanItWasAdmittedForAndGetsBackWhatItCloses() {
		GpuAdmission admission = admission(64 * MIB);
		GpuAdmission.Permit permit = admission.enter(MIB, Duration.ZERO);
		PooledBuffer a = permit.acquire(512 * 1024);
		PooledBuffer b = permit.acquire(512 * 1024);
		assertThat(permit.remainingBytes()).isZero();
		assertThatIllegalStateException().isThrownBy(() -> permit.acquire(1))
			.withMessageContaining("does not fit in the admission of 1048576 bytes to device 0, 1048576 of which are lent");
		a.close();
		a.close();
		assertThat(permit.remainingBytes()).isEqualTo(512 * 1024);
		PooledBuffer c = permit.acquire(512 * 1024);
		assertThat(admission.statistics().lentBytes()).isEqualTo(MIB);
		permit.close();
		assertThat(admission.statistics().lentBytes()).as("buffers of a closed permit are lent as any other").isZero();
		assertThat(this.pool.statistics().inUseBytes()).isEqualTo(MIB);
		assertThatIllegalStateException().isThrownBy(() -> permit.acquire(1)).withMessageContaining("is closed");
		b.close();
		c.close();
		assertThat(this.pool.statistics().inUseBytes()).isZero();
		assertThat(admission.statistics()).isEqualTo(new AdmissionStatistics("device 0", 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0));
	}

	@Test
	void aPermitClosedAfterStreamWorkIsReleasedOnceTheWorkIsDone() {
		GpuAdmission admission = admission(64 * MIB);
		ManualStream stream = new ManualStream();
		GpuAdmission.Permit permit = admission.enter(48 * MIB, Duration.ZERO);
		permit.acquire(48 * MIB).closeAfter(stream);
		permit.closeAfter(stream);
		assertThat(admission.statistics().claimedBytes()).isEqualTo(48 * MIB);
		assertThatExceptionOfType(GpuAdmissionException.class)
			.isThrownBy(() -> admission.enter(48 * MIB, Duration.ZERO));
		stream.finish();
		try (GpuAdmission.Permit next = admission.enter(48 * MIB, Duration.ZERO)) {
			assertThat(permit.isClosed()).isTrue();
			assertThat(next.acquire(48 * MIB).size()).isEqualTo(48 * MIB);
		}
	}

	@Test
	void aWaitingRequestFailsWhenItsPoolCloses() throws Exception {
		GpuAdmission admission = admission(64 * MIB);
		GpuAdmission.Permit held = admission.enter(48 * MIB, Duration.ZERO);
		CompletableFuture<GpuAdmission.Permit> waiting = CompletableFuture
			.supplyAsync(() -> admission.enter(48 * MIB, FOREVER), this.executor);
		await().atMost(Duration.ofMinutes(1)).until(() -> admission.statistics().waiting() == 1);
		this.pool.close();
		assertThat(waiting).failsWithin(Duration.ofMinutes(1))
			.withThrowableThat()
			.havingCause()
			.isInstanceOf(IllegalStateException.class)
			.withMessage("pool 'device' is closed");
		held.close();
	}

	/**
	 * Many request threads enter, fill and check their buffers with a value of their own, and close: nothing is ever
	 * admitted beyond the device, every request completes, no two requests' buffers overlap, and the books are exact at
	 * the end. Admission counts bytes, not where they lie: where the free bytes of fixed segments lie in pieces smaller
	 * than the next buffer of each request let in, all of them wait and the one holding most is told to give way
	 * ({@link GpuRetryOutOfMemoryException}), closes what it holds and runs again, as a service would; the only
	 * failures are these, and a request told runs again to completion.
	 */
	@Test
	void concurrentRequestsNeverExceedTheDeviceAndEachCompletesGivingWayOnlyWhereFreeBytesLieInPieces()
			throws Exception {
		long capacity = 256 * MIB;
		GpuAdmission admission = admission(capacity);
		AtomicBoolean running = new AtomicBoolean(true);
		AtomicLong peakClaimed = new AtomicLong();
		Future<?> watcher = this.executor.submit(() -> {
			while (running.get()) {
				peakClaimed.accumulateAndGet(admission.statistics().claimedBytes(), Math::max);
				Thread.onSpinWait();
			}
		});
		long seed = Long.getLong("gpumem.seed", System.nanoTime());
		System.out.println("AdmissionByBytesTest seed: " + seed + " (replay with -Dgpumem.seed=" + seed + ")");
		LongAdder gaveWay = new LongAdder();
		List<Future<Long>> workers = new ArrayList<>();
		for (int t = 0; t < 16; t++) {
			SplittableRandom random = new SplittableRandom(seed + t);
			int thread = t;
			workers.add(this.executor.submit(() -> {
				long served = 0;
				for (int request = 0; request < 200; request++) {
					int buffers = 1 + random.nextInt(3);
					long[] sizes = new long[buffers];
					long bytes = 0;
					for (int i = 0; i < buffers; i++) {
						sizes[i] = 1 + random.nextLong(24 * MIB);
						bytes += this.pool.blockSize(sizes[i]);
					}
					byte mark = (byte) (thread + 16 * request);
					while (!serve(admission, bytes, sizes, mark, thread)) {
						gaveWay.increment();
					}
					served++;
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
		System.out.println("AdmissionByBytesTest: " + gaveWay.sum() + " runs told to give way");
		assertThat(served).as("seed %d", seed).isEqualTo(16 * 200);
		assertThat(peakClaimed.get()).isPositive().isLessThanOrEqualTo(capacity);
		assertThat(this.pool.statistics().allocationFailures()).as("every failure a give-way").isEqualTo(gaveWay.sum());
		assertThat(this.pool.statistics().memoryWaits().gaveWay()).isEqualTo(gaveWay.sum());
		assertThat(this.pool.statistics().inUseBytes()).isZero();
		AdmissionStatistics statistics = admission.statistics();
		assertThat(statistics.claimedBytes()).isZero();
		assertThat(statistics.lentBytes()).isZero();
		assertThat(statistics.active()).isZero();
		assertThat(statistics.admitted()).isEqualTo(16 * 200 + gaveWay.sum());
	}

	/**
	 * Runs one request of buffers of {@code sizes}, filled with {@code mark} and checked at their ends and middle;
	 * false where it was told to give way, having closed what it held.
	 */
	private static boolean serve(GpuAdmission admission, long bytes, long[] sizes, byte mark, int thread) {
		try (GpuAdmission.Permit permit = admission.enter(bytes, FOREVER)) {
			List<PooledBuffer> held = new ArrayList<>();
			try {
				for (long size : sizes) {
					PooledBuffer buffer = permit.acquire(size);
					buffer.fill(mark);
					held.add(buffer);
				}
				byte[] ends = new byte[1];
				for (PooledBuffer buffer : held) {
					for (long at : new long[] { 0, buffer.size() / 2, buffer.size() - 1 }) {
						buffer.copyTo(at, ends, 0, 1);
						assertThat(ends[0]).as("byte %d of a buffer of thread %d", at, thread).isEqualTo(mark);
					}
				}
				return true;
			}
			catch (GpuRetryOutOfMemoryException ex) {
				return false;
			}
			finally {
				held.forEach(PooledBuffer::close);
			}
		}
	}

}
