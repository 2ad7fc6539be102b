package io.gpumem.pool;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongFunction;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.CudaException;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.arena.Arena;
import io.gpumem.pressure.PressureHandler;
import io.gpumem.pressure.PressureHysteresis;
import io.gpumem.pressure.PressureLevel;
import io.gpumem.pressure.PressureReaction;
import io.gpumem.stream.GpuStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * A pool that sleeps: the device gets back the memory behind its lent buffers, which keep their addresses, their
 * bytes offloaded to host memory or dropped, until a wake, an acquire or a use maps it again.
 */
class SleepWakeTest {

	private static final long GRANULE = 2L << 20;

	private static final long SEED = System.nanoTime();

	/** The host backend's emulation and the CUDA backend on the fake driver, each a device of 1 GiB. */
	static Stream<Named<LongFunction<GpuBackend>>> backends() {
		return ExpandableSegmentsTest.backends();
	}

	/**
	 * 100 lent buffers of 1 KiB to 8 MiB, each written with a pattern of its own: offloaded, the device holds at most
	 * a granule of the pool's; woken, every buffer lies where it lay, with every byte of its pattern.
	 */
	@ParameterizedTest
	@MethodSource("backends")
	void anOffloadedPoolGivesTheDeviceItsMemoryAndWakesWithEveryAddressAndByte(LongFunction<GpuBackend> backends) {
		GpuBackend backend = backends.apply(1L << 30);
		StratifiedMemoryPool pool = pool(backend, SleepOnAcquire.WAKE);
		List<Object> told = new ArrayList<>();
		pool.addListener(new PoolListener() {

			@Override
			public void slept(MemoryPool slept, SleepStatus.Sleep sleep) {
				told.add(sleep);
			}

			@Override
			public void woke(MemoryPool woken, SleepStatus.Wake wake) {
				told.add(wake);
			}

		});
		Lent lent = lend(pool, 100);
		pool.trim(0);
		Set<String> lentBlocks = lentBlocks(pool);

		SleepStatus.Sleep sleep = pool.sleep(SleepMode.OFFLOAD);

		assertThat(pool.sleepStatus().offloadedBytes()).as("held on the host while asleep")
			.isEqualTo(sleep.offloadedBytes());
		assertThat(used(backend)).as("seed %d", SEED).isLessThanOrEqualTo(GRANULE);
		assertThat(pool.reservedBytes()).isLessThanOrEqualTo(GRANULE);
		assertThat(pool.sleepStatus().state()).isEqualTo(SleepStatus.State.ASLEEP);
		assertThat(sleep.lentBytes()).isGreaterThanOrEqualTo(lent.bytes());
		assertThat(sleep.offloadedBytes()).isEqualTo(sleep.releasedBytes()).isGreaterThanOrEqualTo(lent.bytes());

		SleepStatus.Wake wake = pool.wake();

		assertThat(pool.sleepStatus()).extracting(SleepStatus::state, SleepStatus::sleeps, SleepStatus::wakes,
				SleepStatus::offloadedBytes)
			.containsExactly(SleepStatus.State.AWAKE, 1L, 1L, 0L);
		assertThat(told).containsExactly(sleep, wake);
		assertThat(wake.restoredBytes()).isEqualTo(sleep.offloadedBytes()).isEqualTo(wake.mappedBytes());
		assertThat(lentBlocks(pool)).as("every lent block at its offset in its segment").isEqualTo(lentBlocks);
		lent.assertIntact();
		lent.closeAll();
		pool.trim(0);
		assertThat(used(backend)).isZero();
		pool.close();
	}

	@ParameterizedTest
	@MethodSource("backends")
	void aDiscardingSleepKeepsTheAddressesAndDropsTheBytes(LongFunction<GpuBackend> backends) {
		GpuBackend backend = backends.apply(1L << 30);
		StratifiedMemoryPool pool = pool(backend, SleepOnAcquire.WAKE);
		Lent lent = lend(pool, 20);
		Set<String> lentBlocks = lentBlocks(pool);

		SleepStatus.Sleep sleep = pool.sleep(SleepMode.DISCARD);

		assertThat(sleep.offloadedBytes()).isZero();
		assertThat(sleep.releasedBytes()).isGreaterThanOrEqualTo(lent.bytes());
		assertThat(used(backend)).isLessThanOrEqualTo(GRANULE);
		SleepStatus.Wake wake = pool.wake();
		assertThat(wake.restoredBytes()).isZero();
		assertThat(wake.mappedBytes()).isGreaterThanOrEqualTo(lent.bytes());
		assertThat(lentBlocks(pool)).isEqualTo(lentBlocks);
		assertThat(lent.intact()).as("buffers that kept their bytes, seed %d", SEED).isZero();
		lent.write();
		lent.assertIntact();
		lent.closeAll();
		pool.close();
	}

	/**
	 * The bytes go to the backend's pinned memory, and where it runs out to the Java heap; every byte comes back, and
	 * the pinned memory with it.
	 */
	@Test
	void anOffloadBeyondThePinnedMemoryGoesToTheHeap() {
		long pinned = Arena.mappingStep(PoolConfig.DEFAULT_MAPPING_STEP_BYTES, GRANULE) + GRANULE;
		GpuBackend backend = new HostBackend(0, 256L << 20, pinned);
		StratifiedMemoryPool pool = pool(backend, SleepOnAcquire.WAKE);
		Lent lent = lend(pool, 20).with(pool, (int) (2 * pinned));
		SleepStatus.Sleep sleep = pool.sleep(SleepMode.OFFLOAD);
		assertThat(sleep.offloadedBytes()).isGreaterThan(pinned);
		assertThat(used(backend, MemoryKind.PINNED)).as("a step and a granule").isEqualTo(pinned);
		assertThat(pool.wake().restoredBytes()).isEqualTo(sleep.offloadedBytes());
		assertThat(used(backend, MemoryKind.PINNED)).isZero();
		lent.assertIntact();
		lent.closeAll();
		pool.close();
	}

	@Test
	void anAcquireWhileAsleepWakesThePoolFirst() {
		StratifiedMemoryPool pool = pool(new HostBackend(256L << 20), SleepOnAcquire.WAKE);
		Lent lent = lend(pool, 10);
		pool.sleep(SleepMode.OFFLOAD);

		try (PooledBuffer more = pool.acquire(3 * GRANULE)) {
			more.fill((byte) 1);
			assertThat(pool.sleepStatus().state()).isEqualTo(SleepStatus.State.AWAKE);
			assertThat(pool.sleepStatus().lastWake().cause()).isEqualTo("an acquire");
			lent.assertIntact();
		}
		lent.closeAll();
		pool.close();
	}

	@Test
	void aUseOfALentBufferWhileAsleepWakesThePoolFirst() {
		StratifiedMemoryPool pool = pool(new HostBackend(256L << 20), SleepOnAcquire.WAKE);
		Lent lent = lend(pool, 10);
		pool.sleep(SleepMode.OFFLOAD);

		lent.assertIntact();

		assertThat(pool.sleepStatus().state()).isEqualTo(SleepStatus.State.AWAKE);
		assertThat(pool.sleepStatus().lastWake().cause()).isEqualTo("a use of a lent buffer");
		lent.closeAll();
		pool.close();
	}

	/** A warm-up while asleep adds memory to the pool, so it wakes the pool first, as an acquire does, or is refused. */
	@Test
	void aWarmUpWhileAsleepWakesThePoolFirstOrIsRefused() {
		StratifiedMemoryPool pool = pool(new HostBackend(256L << 20), SleepOnAcquire.WAKE);
		Lent lent = lend(pool, 10);
		pool.sleep(SleepMode.OFFLOAD);

		assertThat(pool.warm(64 * 1024, 4)).isEqualTo(4);

		assertThat(pool.sleepStatus().state()).isEqualTo(SleepStatus.State.AWAKE);
		assertThat(pool.sleepStatus().lastWake().cause()).isEqualTo("a warm-up");
		lent.assertIntact();
		lent.closeAll();
		pool.close();

		GpuBackend backend = new HostBackend(256L << 20);
		StratifiedMemoryPool refusing = pool(backend, SleepOnAcquire.REFUSE);
		refusing.sleep(SleepMode.OFFLOAD);
		assertThatExceptionOfType(PoolAsleepException.class).isThrownBy(() -> refusing.warm(64 * 1024, 4))
			.withMessage("pool 'sleepy' is asleep and refuses a warm-up (sleep on-acquire: refuse): wake it first");
		assertThat(used(backend)).isZero();
		assertThat(refusing.cachedBytes()).isZero();
		refusing.close();
	}

	/** Over fixed segments too, which a sleep with nothing lent leaves asleep: a warm-up wakes the pool first. */
	@Test
	void aWarmUpOfAFixedSegmentsPoolAsleepWakesItFirst() {
		StratifiedMemoryPool pool = new StratifiedMemoryPool(new HostBackend(256L << 20).allocator(MemoryKind.DEVICE),
				PoolConfig.builder("fixed").build());
		pool.sleep(SleepMode.OFFLOAD);

		assertThat(pool.warm(64 * 1024, 4)).isEqualTo(4);

		assertThat(pool.sleepStatus().state()).isEqualTo(SleepStatus.State.AWAKE);
		assertThat(pool.reservedBytes()).isPositive();
		pool.close();
	}

	@Test
	void aPoolThatRefusesWhileAsleepFailsAcquiresAndUsesUntilWoken() {
		StratifiedMemoryPool pool = pool(new HostBackend(256L << 20), SleepOnAcquire.REFUSE);
		Lent lent = lend(pool, 10);
		pool.sleep(SleepMode.OFFLOAD);

		assertThatExceptionOfType(PoolAsleepException.class).isThrownBy(() -> pool.acquire(1024))
			.withMessage("pool 'sleepy' is asleep and refuses an acquire (sleep on-acquire: refuse): wake it first");
		assertThatExceptionOfType(PoolAsleepException.class).isThrownBy(lent::assertIntact)
			.withMessageContaining("refuses a use of a lent buffer");
		assertThat(pool.sleepStatus().state()).isEqualTo(SleepStatus.State.ASLEEP);

		pool.wake();
		lent.assertIntact();
		pool.acquire(1024).close();
		lent.closeAll();
		pool.close();
	}

	/**
	 * An acquire that waits for memory as a sleep begins, and finds it once a buffer is closed while the pool sleeps,
	 * wakes the pool before it maps: the closed span's granules are asleep, and only a wake maps them again.
	 */
	@Test
	void anAcquireWaitingForMemoryAcrossASleepWakesThePoolBeforeItMaps() throws Exception {
		GpuBackend backend = new HostBackend(32L << 20);
		StratifiedMemoryPool pool = pool(backend, SleepOnAcquire.WAKE);
		Lent lent = lend(pool, 1);

		CompletableFuture<PooledBuffer> waiting = acquireAcrossASleep(pool, pool.acquire(24L << 20));

		try (PooledBuffer more = assertWokeThePool(waiting, pool)) {
			more.fill((byte) 5);
		}
		lent.assertIntact();
		lent.closeAll();
		pool.close();
		assertThat(used(backend)).isZero();
	}

	/**
	 * An acquire that waits for memory as a sleep begins, of a pool that refuses while asleep, is refused once it would
	 * map, and leaves the pool asleep as it was.
	 */
	@Test
	void anAcquireWaitingForMemoryAcrossASleepOfARefusingPoolIsRefused() {
		GpuBackend backend = new HostBackend(32L << 20);
		StratifiedMemoryPool pool = pool(backend, SleepOnAcquire.REFUSE);
		Lent lent = lend(pool, 1);
		PooledBuffer filling = pool.acquire(24L << 20);
		long reserved = pool.reservedBytes();

		CompletableFuture<PooledBuffer> waiting = acquireAcrossASleep(pool, filling);

		assertRefusedAsleep(waiting, pool, backend);
		assertThat(pool.statistics().inUseBuffers()).isEqualTo(1);
		pool.wake();
		assertThat(pool.reservedBytes()).as("the closed buffer's granules woken with the rest").isEqualTo(reserved);
		lent.assertIntact();
		lent.closeAll();
		pool.close();
		assertThat(used(backend)).isZero();
	}

	/**
	 * An acquire that waits for memory another process holds as an idle pool, lending nothing, sleeps wakes the pool
	 * before it maps: a sleep that put no granule asleep still lasts until a wake.
	 */
	@Test
	void anAcquireWaitingForMemoryAcrossTheSleepOfAnIdlePoolWakesItBeforeItMaps() throws Exception {
		GpuBackend backend = new HostBackend(32L << 20);
		StratifiedMemoryPool pool = pool(backend, SleepOnAcquire.WAKE);

		CompletableFuture<PooledBuffer> waiting = acquireAcrossTheSleepOfAnIdlePool(pool, backend);

		assertWokeThePool(waiting, pool).close();
		pool.close();
		assertThat(used(backend)).isZero();
	}

	/** The same acquire, of an idle pool that refuses while asleep, is refused and maps nothing. */
	@Test
	void anAcquireWaitingForMemoryAcrossTheSleepOfAnIdleRefusingPoolIsRefused() {
		GpuBackend backend = new HostBackend(32L << 20);
		StratifiedMemoryPool pool = pool(backend, SleepOnAcquire.REFUSE);

		CompletableFuture<PooledBuffer> waiting = acquireAcrossTheSleepOfAnIdlePool(pool, backend);

		assertRefusedAsleep(waiting, pool, backend);
		pool.wake();
		assertThat(pool.sleepStatus().state()).isEqualTo(SleepStatus.State.AWAKE);
		pool.acquire(6 * GRANULE).close();
		pool.close();
		assertThat(used(backend)).isZero();
	}

	/**
	 * Over fixed segments, a sleep gives back what is cached and refuses while a buffer is lent, naming why; with
	 * nothing lent, it sleeps.
	 */
	@Test
	void fixedSegmentsReleaseWhatIsCachedAndSleepOnlyWithNothingLent() {
		GpuBackend backend = new HostBackend(256L << 20);
		StratifiedMemoryPool pool = new StratifiedMemoryPool(backend.allocator(MemoryKind.DEVICE),
				PoolConfig.builder("fixed").build());
		PooledBuffer lent = pool.acquire(24L << 20);
		pool.acquire(40L << 20).close();
		assertThat(pool.cachedBytes()).isPositive();

		assertThatIllegalStateException().isThrownBy(() -> pool.sleep(SleepMode.OFFLOAD))
			.withMessageStartingWith("pool 'fixed' cannot sleep: it lends 24.00 MiB in fixed segments, whose addresses "
					+ "could not be kept");
		assertThat(pool.cachedBytes()).isZero();
		assertThat(pool.reservedBytes()).isEqualTo(24L << 20);
		assertThat(pool.sleepStatus().state()).isEqualTo(SleepStatus.State.AWAKE);
		lent.fill((byte) 3);

		lent.close();
		SleepStatus.Sleep sleep = pool.sleep(SleepMode.DISCARD);
		assertThat(sleep.releasedBytes()).isEqualTo(24L << 20);
		assertThat(used(backend)).isZero();
		assertThat(pool.sleepStatus().state()).isEqualTo(SleepStatus.State.ASLEEP);
		pool.acquire(1024).close();
		assertThat(pool.sleepStatus().state()).isEqualTo(SleepStatus.State.AWAKE);
		pool.close();
	}

	/**
	 * Trims and closes while asleep touch no memory and lose nothing: a buffer closed asleep is mapped again at the
	 * wake and unmapped by the next trim; the others keep their bytes.
	 */
	@Test
	void trimsAndClosesWhileAsleepLoseNothing() {
		GpuBackend backend = new HostBackend(256L << 20);
		StratifiedMemoryPool pool = pool(backend, SleepOnAcquire.WAKE);
		Lent lent = lend(pool, 12);
		PooledBuffer closedAsleep = pool.acquire(6 * GRANULE);
		closedAsleep.fill((byte) 9);
		pool.sleep(SleepMode.OFFLOAD);

		assertThat(pool.trim(0)).isZero();
		closedAsleep.close();
		assertThat(pool.trim(0)).isZero();
		assertThat(pool.sleepStatus().state()).isEqualTo(SleepStatus.State.ASLEEP);
		assertThat(used(backend)).isLessThanOrEqualTo(GRANULE);

		pool.wake();
		pool.trim(0);
		assertThat(pool.reservedBytes()).as("the closed buffer's granules unmapped again")
			.isLessThanOrEqualTo(lent.bytes() + lent.buffers.size() * 2 * GRANULE);
		lent.assertIntact();
		lent.closeAll();
		pool.trim(0);
		assertThat(used(backend)).isZero();
		pool.close();
	}

	/**
	 * The pressure handler's checks and shrinks leave a pool asleep as it is, and a claim of an admission by bytes
	 * wakes it with its first acquire; no byte of a lent buffer is lost across them.
	 */
	@Test
	void pressureAndClaimsAcrossASleepLoseNothing() {
		GpuBackend backend = new HostBackend(256L << 20);
		StratifiedMemoryPool pool = pool(backend, SleepOnAcquire.WAKE);
		GpuAdmission admission = new GpuAdmission("device 0", 0, Duration.ofSeconds(1), pool);
		PressureHandler pressure = PressureHandler.builder(backend::memoryInfo)
			.hysteresis(PressureHysteresis.NONE)
			.reaction(PressureLevel.WARNING, PressureReaction.shrink(0.7))
			.build();
		pressure.register(pool);
		Lent lent = lend(pool, 10);
		pool.acquire(12 * GRANULE).close();
		pool.sleep(SleepMode.OFFLOAD);

		assertThat(pressure.check()).isEqualTo(PressureLevel.NORMAL);
		Allocation other = backend.allocator(MemoryKind.DEVICE).allocate(210L << 20);
		assertThat(pressure.check()).isEqualTo(PressureLevel.WARNING);
		assertThat(pool.sleepStatus().state()).as("a shrink touches no lent memory").isEqualTo(SleepStatus.State.ASLEEP);
		backend.allocator(MemoryKind.DEVICE).free(other);

		try (GpuAdmission.Permit permit = admission.enter(4 * GRANULE, Duration.ofSeconds(1));
				PooledBuffer claimed = permit.acquire(4 * GRANULE)) {
			claimed.fill((byte) 2);
			assertThat(pool.sleepStatus().state()).isEqualTo(SleepStatus.State.AWAKE);
			assertThat(pool.sleepStatus().lastWake().cause()).isEqualTo("an acquire");
		}
		lent.assertIntact();
		lent.closeAll();
		pressure.close();
		pool.close();
	}

	/** A buffer closed after stream work goes back once the work has run, before anything is unmapped. */
	@Test
	void aSleepWaitsForTheStreamWorkOfBuffersClosedAfterIt() {
		GpuBackend backend = new HostBackend(256L << 20);
		StratifiedMemoryPool pool = pool(backend, SleepOnAcquire.WAKE);
		ManualStream stream = new ManualStream();
		PooledBuffer working = pool.acquire(4 * GRANULE);
		working.closeAfter(stream);
		assertThat(stream.record().isComplete()).isFalse();

		SleepStatus.Sleep sleep = pool.sleep(SleepMode.OFFLOAD);

		assertThat(stream.record().isComplete()).as("the work ran first").isTrue();
		assertThat(sleep.lentBytes()).isZero();
		assertThat(sleep.offloadedBytes()).isZero();
		assertThat(used(backend)).isZero();
		pool.close();
	}

	/**
	 * A copy into a lent buffer, enqueued on a stream and not yet run, runs before the sleep offloads the buffer: the
	 * wake brings back the bytes it copied.
	 */
	@Test
	void aSleepLetsTheStreamWorkOnLentBuffersRunFirst() {
		CudaBackend backend = CudaBackend.open(new FakeCudaDriver(1L << 30), 0);
		StratifiedMemoryPool pool = pool(backend, SleepOnAcquire.WAKE);
		Lent lent = lend(pool, 2);
		PooledBuffer target = lent.buffers().get(0);
		PooledBuffer source = lent.buffers().get(1);
		long bytes = Math.min(target.size(), source.size());
		GpuStream stream = backend.createStream();
		stream.copy(source, 0, target, 0, bytes);
		assertThat(stream.record().isComplete()).isFalse();

		pool.sleep(SleepMode.OFFLOAD);

		assertThat(stream.record().isComplete()).as("the copy ran first").isTrue();
		pool.wake();
		byte[] copied = new byte[Math.toIntExact(bytes)];
		target.copyTo(0, copied, 0, copied.length);
		assertThat(copied).as("seed %d", SEED)
			.isEqualTo(java.util.Arrays.copyOf(lent.patterns().get(1), copied.length));
		stream.close();
		lent.closeAll();
		pool.close();
		backend.close();
	}

	/** A pool closed while asleep maps nothing again: a use of a buffer it lent fails, naming why. */
	@Test
	void aPoolClosedWhileAsleepRefusesTheUseOfItsBuffers() {
		GpuBackend backend = new HostBackend(256L << 20);
		StratifiedMemoryPool pool = pool(backend, SleepOnAcquire.WAKE);
		Lent lent = lend(pool, 4);
		pool.sleep(SleepMode.OFFLOAD);
		pool.close();

		assertThatIllegalStateException().isThrownBy(lent::assertIntact)
			.withMessage("pool 'sleepy' was closed while asleep: the memory behind its lent buffers is gone");
		lent.closeAll();
		assertThat(used(backend)).isZero();
	}

	/** A listener that fails is logged, and the sleep and the wake it heard of still succeed. */
	@Test
	void aFailingListenerFailsNoSleepOrWake() {
		StratifiedMemoryPool pool = pool(new HostBackend(256L << 20), SleepOnAcquire.WAKE);
		pool.addListener(new PoolListener() {

			@Override
			public void slept(MemoryPool slept, SleepStatus.Sleep sleep) {
				throw new IllegalStateException("a listener that fails");
			}

			@Override
			public void woke(MemoryPool woken, SleepStatus.Wake wake) {
				throw new IllegalStateException("a listener that fails");
			}

		});
		Lent lent = lend(pool, 4);
		assertThat(pool.sleep(SleepMode.OFFLOAD).offloadedBytes()).isPositive();
		assertThat(pool.sleepStatus().lastSleep()).isNotNull();
		lent.assertIntact();
		assertThat(pool.sleepStatus()).extracting(SleepStatus::state, SleepStatus::sleeps, SleepStatus::wakes)
			.containsExactly(SleepStatus.State.AWAKE, 1L, 1L);
		lent.closeAll();
		pool.close();
	}

	/**
	 * A wake whose copy back fails, and the unmap of the memory it mapped for that copy refused too, fails with the
	 * refusal, the copy's failure suppressed in it; the granule stays asleep, its memory mapped and held, and the next
	 * wake copies its bytes back into it. The pool's books match the driver's throughout.
	 */
	@Test
	void aWakeWhoseCopyBackFailsAndWhoseUnmapIsRefusedWakesAgainWithEveryByte() {
		Set<String> refused = ConcurrentHashMap.newKeySet();
		FakeCudaDriver driver = refusing(refused);
		CudaBackend backend = CudaBackend.open(driver, 0);
		StratifiedMemoryPool pool = pool(backend, SleepOnAcquire.REFUSE);
		Lent lent = lend(pool, 20);
		SleepStatus.Sleep sleep = pool.sleep(SleepMode.OFFLOAD);
		long asleep = pool.reservedBytes();
		assertThat(asleep).isEqualTo(used(backend));
		refused.addAll(List.of("cuMemcpyHtoDAsync", "cuMemUnmap"));

		assertThatExceptionOfType(CudaException.class).isThrownBy(pool::wake).satisfies((failure) -> {
			assertThat(failure.call()).isEqualTo("cuMemUnmap");
			assertThat(failure.getSuppressed()).singleElement()
				.satisfies((copy) -> assertThat(((CudaException) copy).call()).isEqualTo("cuMemcpyHtoDAsync"));
		});
		assertThat(refused).isEmpty();
		assertThat(pool.sleepStatus().state()).isEqualTo(SleepStatus.State.ASLEEP);
		assertThat(pool.reservedBytes()).as("the granule mapped for the copy, held").isGreaterThan(asleep);
		assertBooksMatchTheDriver(pool, backend);

		assertThat(pool.wake().restoredBytes()).isEqualTo(sleep.offloadedBytes());
		lent.assertIntact();
		assertBooksMatchTheDriver(pool, backend);
		lent.closeAll();
		pool.close();
		assertThat(used(backend)).isZero();
		backend.close();
		assertThat(driver.liveAllocations()).isZero();
	}

	/**
	 * A sleep whose second unmap the driver refuses fails with the refusal: the run unmapped before is asleep, its
	 * bytes offloaded, the others stay mapped, their copies dropped, and the books match the driver's; the wake maps
	 * that run again, and every buffer reads its bytes.
	 */
	@Test
	void aSleepTheDriverRefusesPartwayKeepsTheRunsItDidNotUnmapMapped() {
		AtomicInteger unmaps = new AtomicInteger(Integer.MIN_VALUE);
		FakeCudaDriver driver = new FakeCudaDriver(1L << 30).pausingMemoryCalls((call) -> {
			if (call.equals("cuMemUnmap") && unmaps.incrementAndGet() == 2) {
				throw new CudaException(call, 1, "CUDA_ERROR_INVALID_VALUE");
			}
		});
		CudaBackend backend = CudaBackend.open(driver, 0);
		StratifiedMemoryPool pool = pool(backend, SleepOnAcquire.REFUSE);
		Lent lent = lend(pool, 20);
		pool.trim(0);
		long held = pool.reservedBytes();
		unmaps.set(0);

		assertThatExceptionOfType(CudaException.class).isThrownBy(() -> pool.sleep(SleepMode.OFFLOAD))
			.satisfies((failure) -> assertThat(failure.call()).isEqualTo("cuMemUnmap"));

		long asleep = held - pool.reservedBytes();
		assertThat(pool.sleepStatus().state()).isEqualTo(SleepStatus.State.ASLEEP);
		assertThat(asleep).as("the run unmapped before the refusal").isPositive().isLessThan(held);
		assertThat(pool.sleepStatus().offloadedBytes()).isEqualTo(asleep);
		assertBooksMatchTheDriver(pool, backend);
		assertThat(pool.wake().restoredBytes()).isEqualTo(asleep);
		lent.assertIntact();
		assertThat(pool.reservedBytes()).isEqualTo(used(backend)).isEqualTo(held);
		lent.closeAll();
		pool.close();
		backend.close();
		assertThat(driver.liveAllocations()).as("the copies dropped, and all else").isZero();
	}

	/** A pool closed while asleep gives back, with the rest, the memory a wake mapped and could not unmap again. */
	@Test
	void aPoolClosedWhileAsleepGivesBackWhatAWakeCouldNotUnmap() {
		Set<String> refused = ConcurrentHashMap.newKeySet();
		FakeCudaDriver driver = refusing(refused);
		CudaBackend backend = CudaBackend.open(driver, 0);
		StratifiedMemoryPool pool = pool(backend, SleepOnAcquire.REFUSE);
		Lent lent = lend(pool, 20);
		pool.sleep(SleepMode.OFFLOAD);
		refused.addAll(List.of("cuMemcpyHtoDAsync", "cuMemUnmap"));
		assertThatExceptionOfType(CudaException.class).isThrownBy(pool::wake);

		pool.close();

		lent.closeAll();
		assertThat(used(backend)).isZero();
		backend.close();
		assertThat(driver.liveAllocations()).isZero();
	}

	/** A second sleep and a wake of an awake pool change nothing. */
	@Test
	void sleepingTwiceAndWakingAnAwakePoolChangeNothing() {
		StratifiedMemoryPool pool = pool(new HostBackend(256L << 20), SleepOnAcquire.WAKE);
		Lent lent = lend(pool, 6);
		assertThat(pool.wake().mappedBytes()).isZero();
		pool.sleep(SleepMode.OFFLOAD);
		SleepStatus.Sleep again = pool.sleep(SleepMode.DISCARD);
		assertThat(again.releasedBytes()).isZero();
		assertThat(again.offloadedBytes()).isZero();
		pool.wake();
		lent.assertIntact();
		lent.closeAll();
		pool.close();
	}

	/** The pool's reserved bytes and its segments' bytes are what the device holds for it. */
	private static void assertBooksMatchTheDriver(StratifiedMemoryPool pool, GpuBackend backend) {
		assertThat(pool.reservedBytes()).isEqualTo(used(backend));
		assertThat(pool.statistics().segments().segmentBytes()).isEqualTo(used(backend));
	}

	/** A fake driver of 1 GiB that refuses the next call of each name in {@code refused}, taking it out. */
	private static FakeCudaDriver refusing(Set<String> refused) {
		return new FakeCudaDriver(1L << 30).pausingMemoryCalls((call) -> {
			if (refused.remove(call)) {
				throw new CudaException(call, 1, "CUDA_ERROR_INVALID_VALUE");
			}
		});
	}

	private static StratifiedMemoryPool pool(GpuBackend backend, SleepOnAcquire onAcquire) {
		return new StratifiedMemoryPool(backend.virtualMemory().allocator(),
				PoolConfig.builder("sleepy").sleepOnAcquire(onAcquire).maxWait(Duration.ZERO).build());
	}

	/**
	 * An acquire of six granules, on another thread, that waits for the memory {@code filling} holds as the pool
	 * sleeps, and finds it once {@code filling} is closed while the pool sleeps.
	 */
	private static CompletableFuture<PooledBuffer> acquireAcrossASleep(StratifiedMemoryPool pool,
			PooledBuffer filling) {
		CompletableFuture<PooledBuffer> waiting = CompletableFuture
			.supplyAsync(() -> pool.acquire(6 * GRANULE, Duration.ofMinutes(1)));
		await().atMost(Duration.ofMinutes(1)).until(() -> pool.statistics().memoryWaits().waits() == 1);
		pool.sleep(SleepMode.OFFLOAD);
		filling.close();
		return waiting;
	}

	/**
	 * An acquire of six granules, on another thread, that waits for memory another process holds as the pool, lending
	 * nothing, sleeps, and finds it once that process frees it while the pool sleeps.
	 */
	private static CompletableFuture<PooledBuffer> acquireAcrossTheSleepOfAnIdlePool(StratifiedMemoryPool pool,
			GpuBackend backend) {
		MemoryAllocator device = backend.allocator(MemoryKind.DEVICE);
		Allocation otherProcess = device.allocate(24L << 20);
		CompletableFuture<PooledBuffer> waiting = CompletableFuture
			.supplyAsync(() -> pool.acquire(6 * GRANULE, Duration.ofMinutes(1)));
		await().atMost(Duration.ofMinutes(1)).until(() -> pool.statistics().memoryWaits().waits() == 1);
		pool.sleep(SleepMode.OFFLOAD);
		device.free(otherProcess);
		return waiting;
	}

	/** Asserts that {@code waiting} got its buffer having woken the pool, once; answers the buffer. */
	private static PooledBuffer assertWokeThePool(CompletableFuture<PooledBuffer> waiting, StratifiedMemoryPool pool)
			throws Exception {
		assertThat(waiting).as("the acquire, which woke the pool").succeedsWithin(Duration.ofSeconds(30));
		assertThat(pool.sleepStatus().state()).isEqualTo(SleepStatus.State.AWAKE);
		assertThat(pool.sleepStatus().wakes()).isOne();
		assertThat(pool.sleepStatus().lastWake().cause()).isEqualTo("an acquire");
		return waiting.get();
	}

	/**
	 * Asserts that {@code waiting} was refused as the pool slept, which it still does, with nothing of it mapped and
	 * no allocation failure counted.
	 */
	private static void assertRefusedAsleep(CompletableFuture<PooledBuffer> waiting, StratifiedMemoryPool pool,
			GpuBackend backend) {
		assertThat(waiting).failsWithin(Duration.ofSeconds(30))
			.withThrowableOfType(ExecutionException.class)
			.havingCause()
			.isInstanceOf(PoolAsleepException.class)
			.withMessageContaining("refuses an acquire");
		assertThat(pool.sleepStatus().state()).isEqualTo(SleepStatus.State.ASLEEP);
		assertThat(pool.statistics().allocationFailures()).as("a refusal while asleep, as at an acquire's start")
			.isZero();
		assertThat(used(backend)).as("nothing mapped while asleep").isZero();
	}

	/** {@code count} buffers of 1 KiB to 8 MiB, each written with random bytes of its own. */
	private static Lent lend(StratifiedMemoryPool pool, int count) {
		SplittableRandom random = new SplittableRandom(SEED);
		List<PooledBuffer> buffers = new ArrayList<>();
		List<byte[]> patterns = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			int bytes = (int) Math.min(8L << 20, 1024L << random.nextInt(14)) - random.nextInt(256);
			PooledBuffer buffer = pool.acquire(bytes);
			byte[] pattern = new byte[bytes];
			random.nextBytes(pattern);
			buffer.copyFrom(pattern);
			buffers.add(buffer);
			patterns.add(pattern);
		}
		return new Lent(buffers, patterns);
	}

	/** Where each lent block lies: its segment and offset, and its size. */
	private static Set<String> lentBlocks(StratifiedMemoryPool pool) {
		PoolSnapshot snapshot = pool.snapshot().orElseThrow();
		Set<String> lent = new java.util.HashSet<>();
		for (int s = 0; s < snapshot.segments().size(); s++) {
			int segment = s;
			snapshot.segments().get(s).blocks().stream().filter((block) -> block.state() == PoolSnapshot.State.LENT)
				.forEach((block) -> lent.add(segment + "@" + block.offset() + "+" + block.bytes()));
		}
		return lent.stream().collect(Collectors.toSet());
	}

	private static long used(GpuBackend backend) {
		return used(backend, MemoryKind.DEVICE);
	}

	private static long used(GpuBackend backend, MemoryKind kind) {
		var info = backend.allocator(kind).memoryInfo();
		return info.totalBytes() - info.freeBytes();
	}

	private record Lent(List<PooledBuffer> buffers, List<byte[]> patterns) {

		long bytes() {
			return this.patterns.stream().mapToLong((pattern) -> pattern.length).sum();
		}

		/** These and one more buffer of {@code bytes}, written with random bytes of its own. */
		Lent with(StratifiedMemoryPool pool, int bytes) {
			byte[] pattern = new byte[bytes];
			new SplittableRandom(SEED + 1).nextBytes(pattern);
			PooledBuffer buffer = pool.acquire(bytes);
			buffer.copyFrom(pattern);
			List<PooledBuffer> buffers = new ArrayList<>(this.buffers);
			buffers.add(buffer);
			List<byte[]> patterns = new ArrayList<>(this.patterns);
			patterns.add(pattern);
			return new Lent(buffers, patterns);
		}

		void assertIntact() {
			for (int i = 0; i < this.buffers.size(); i++) {
				byte[] back = new byte[this.patterns.get(i).length];
				this.buffers.get(i).copyTo(back);
				assertThat(back).as("buffer %d of %d bytes, seed %d", i, back.length, SEED)
					.isEqualTo(this.patterns.get(i));
			}
		}

		/** How many buffers read their pattern still. */
		long intact() {
			int intact = 0;
			for (int i = 0; i < this.buffers.size(); i++) {
				byte[] back = new byte[this.patterns.get(i).length];
				this.buffers.get(i).copyTo(back);
				intact += java.util.Arrays.equals(back, this.patterns.get(i)) ? 1 : 0;
			}
			return intact;
		}

		void write() {
			for (int i = 0; i < this.buffers.size(); i++) {
				this.buffers.get(i).copyFrom(this.patterns.get(i));
			}
		}

		void closeAll() {
			this.buffers.forEach(PooledBuffer::close);
		}

	}

}
