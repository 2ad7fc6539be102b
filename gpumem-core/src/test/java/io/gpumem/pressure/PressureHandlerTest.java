package io.gpumem.pressure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.allocator.LimitingAllocator;
import io.gpumem.allocator.MemoryBudget;
import io.gpumem.config.InvalidSettingException;
import io.gpumem.host.HostBackend;
import io.gpumem.limit.DeviceLimit;
import io.gpumem.limit.SharedDevice;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PoolLog;
import io.gpumem.pool.PoolStatistics;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.reduction.ReductionBuffer;
import io.gpumem.reduction.ReductionBufferCache;
import io.gpumem.reduction.ReductionOp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

class PressureHandlerTest {

	private static final long MIB = 1L << 20;

	private static final long CAPACITY = 64 * MIB;

	private final HostBackend backend = new HostBackend(CAPACITY);

	private final List<StratifiedMemoryPool> pools = new ArrayList<>();

	@AfterEach
	void closePools() {
		this.pools.forEach(StratifiedMemoryPool::close);
	}

	private StratifiedMemoryPool pool(String name, long... sizeClasses) {
		StratifiedMemoryPool pool = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE),
				PoolConfig.builder(name).sizeClasses(sizeClasses).build());
		this.pools.add(pool);
		return pool;
	}

	@Test
	void thresholdsOutOfOrderAreRefusedNamingTheValues() {
		assertThatExceptionOfType(InvalidSettingException.class).isThrownBy(() -> new PressureThresholds(0.8, 0.75, 0.9))
			.withMessage("warning must be above elevated (0.8); thresholds must satisfy 0 < elevated < warning"
					+ " < critical <= 1, not 0.75")
			.satisfies((ex) -> assertThat(ex.setting()).isEqualTo("warning"));
		assertThatExceptionOfType(InvalidSettingException.class).isThrownBy(() -> new PressureThresholds(0.5, 0.7, 1.2))
			.satisfies((ex) -> assertThat(ex.setting()).isEqualTo("critical"))
			.satisfies((ex) -> assertThat(ex.value()).isEqualTo(1.2));
		assertThatExceptionOfType(InvalidSettingException.class).isThrownBy(() -> new PressureThresholds(0, 0.7, 0.9))
			.satisfies((ex) -> assertThat(ex.setting()).isEqualTo("elevated"));
		assertThatIllegalArgumentException().isThrownBy(() -> PressureReaction.shrink(0))
			.withMessageContaining("(0, 1]");
		assertThatIllegalArgumentException().isThrownBy(
				() -> PressureHandler.builder(this.backend::memoryInfo).reaction(PressureLevel.NORMAL,
						PressureReaction.none()));
	}

	@Test
	void warmingPastTheWarningThresholdShrinksToTheTargetAndCountsIt() {
		StratifiedMemoryPool pool = pool("device", MIB);
		PressureHandler handler = PressureHandler.builder(this.backend::memoryInfo)
			.hysteresis(PressureHysteresis.NONE)
			.reaction(PressureLevel.WARNING, PressureReaction.shrink(0.7))
			.build();
		List<PressureChange> changes = new CopyOnWriteArrayList<>();
		handler.addListener(changes::add);
		handler.register(pool);
		pool.warm(MIB, 52);
		assertThat(this.backend.memoryInfo().utilization()).isLessThanOrEqualTo(0.7);
		assertThat(handler.level()).as("the level of what the check read").isEqualTo(PressureLevel.WARNING);
		handler.check();
		PressureStatistics stats = handler.statistics();
		assertThat(stats.shrinks()).isEqualTo(1);
		assertThat(stats.shrunkBytes()).isEqualTo(pool.statistics().trimmedBytes()).isPositive();
		assertThat(stats.shrunkBytes()).isEqualTo(52 * MIB - pool.reservedBytes());
		assertThat(changes).extracting(PressureChange::level)
			.containsExactly(PressureLevel.WARNING, PressureLevel.ELEVATED);
		assertThat(handler.level()).isEqualTo(PressureLevel.ELEVATED);
	}

	@Test
	void aboveTheProtectedAmountEveryCheckShrinksDownToItWhateverTheLevel() {
		DeviceLimit limit = new DeviceLimit(new SharedDevice(0, CAPACITY, null, null), 32 * MIB,
				"CUDA_DEVICE_MEMORY_LIMIT_0 (HAMi)", true, 8 * MIB, "dmem.min of cgroup /pod (region) (cgroup dmem)", 0,
				List.of());
		MemoryBudget budget = limit.budget(1.0);
		StratifiedMemoryPool pool = new StratifiedMemoryPool(
				new LimitingAllocator(this.backend.allocator(MemoryKind.DEVICE), budget),
				PoolConfig.builder("device").sizeClasses(MIB).build());
		this.pools.add(pool);
		PressureHandler unprotected = PressureHandler
			.builder(() -> limit.memoryInfo(this.backend.memoryInfo(), budget.usedBytes()))
			.hysteresis(PressureHysteresis.NONE)
			.build();
		unprotected.register(pool);
		pool.warm(MIB, 12);
		assertThat(unprotected.level()).as("12 MiB of a 32 MiB limit").isEqualTo(PressureLevel.NORMAL);
		assertThat(unprotected.utilization(PressureHandler.Memory.DEVICE)).isEqualTo(12.0 / 32);
		assertThat(pool.reservedBytes()).as("without a protected amount, NORMAL shrinks nothing").isEqualTo(12 * MIB);
		PressureHandler.Builder builder = PressureHandler
			.builder(() -> limit.memoryInfo(this.backend.memoryInfo(), budget.usedBytes()))
			.hysteresis(PressureHysteresis.NONE);
		limit.protectedUtilization().ifPresent(builder::protectedUtilization);
		PressureHandler handler = builder.build();
		handler.register(pool);
		assertThat(handler.check()).isEqualTo(PressureLevel.NORMAL);
		assertThat(pool.reservedBytes()).as("shrunk to the 8 MiB dmem.min protects").isEqualTo(8 * MIB);
		assertThat(handler.statistics().shrunkBytes()).isEqualTo(4 * MIB);
		assertThat(this.backend.memoryInfo().usedBytes()).isEqualTo(8 * MIB);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> PressureHandler.builder(this.backend::memoryInfo).protectedUtilization(1.5))
			.withMessage("a protected utilization lies in (0, 1], not 1.5");
	}

	@Test
	void aCallbackIsToldOncePerTransitionIntoItsLevel() {
		StratifiedMemoryPool pool = pool("device", MIB);
		PressureHandler handler = PressureHandler.builder(this.backend::memoryInfo)
			.hysteresis(PressureHysteresis.NONE)
			.reaction(PressureLevel.WARNING, PressureReaction.callback())
			.build();
		List<PressureChange> callbacks = new CopyOnWriteArrayList<>();
		List<PressureChange> changes = new CopyOnWriteArrayList<>();
		handler.addCallback(callbacks::add);
		handler.addListener(changes::add);
		handler.register(pool);
		List<PooledBuffer> held = new ArrayList<>();
		for (int round = 0; round < 2; round++) {
			for (int i = 0; i < 50; i++) {
				held.add(pool.acquire(MIB));
			}
			for (int i = 0; i < 5; i++) {
				assertThat(handler.check()).isEqualTo(PressureLevel.WARNING);
			}
			held.forEach(PooledBuffer::close);
			held.clear();
			pool.trim(0);
			assertThat(handler.check()).isEqualTo(PressureLevel.NORMAL);
		}
		assertThat(callbacks).hasSize(2).allSatisfy((change) -> {
			assertThat(change.level()).isEqualTo(PressureLevel.WARNING);
			assertThat(change.utilization()).isGreaterThanOrEqualTo(0.75);
		});
		assertThat(handler.statistics().callbacks()).isEqualTo(2);
		assertThat(changes).extracting(PressureChange::level)
			.containsExactly(PressureLevel.ELEVATED, PressureLevel.WARNING, PressureLevel.NORMAL,
					PressureLevel.ELEVATED, PressureLevel.WARNING, PressureLevel.NORMAL);
	}

	@Test
	void allocationsFromSeveralThreadsWhileShrinksRunKeepAccountingExact() throws Exception {
		StratifiedMemoryPool pool = pool("device", 64 * 1024, 256 * 1024, MIB);
		PressureHandler handler = PressureHandler.builder(this.backend::memoryInfo)
			.thresholds(new PressureThresholds(0.2, 0.3, 0.5))
			.reaction(PressureLevel.ELEVATED, PressureReaction.shrink(0.1))
			.reaction(PressureLevel.WARNING, PressureReaction.shrink(0.1))
			.build();
		handler.register(pool);
		ExecutorService executor = Executors.newFixedThreadPool(5);
		AtomicBoolean running = new AtomicBoolean(true);
		List<Future<?>> workers = new ArrayList<>();
		for (int t = 0; t < 4; t++) {
			long seed = t;
			workers.add(executor.submit(() -> {
				SplittableRandom random = new SplittableRandom(seed);
				PooledBuffer[] held = new PooledBuffer[8];
				for (int op = 0; op < 20_000; op++) {
					if (op == 10_000) {
						awaitFirstShrink(handler);
					}
					int slot = random.nextInt(held.length);
					if (held[slot] != null) {
						held[slot].close();
					}
					held[slot] = pool.acquire(1 + random.nextLong(MIB));
				}
				for (PooledBuffer buffer : held) {
					buffer.close();
				}
				return null;
			}));
		}
		Future<?> checker = executor.submit(() -> {
			while (running.get()) {
				handler.check();
			}
			return null;
		});
		for (Future<?> worker : workers) {
			worker.get(2, TimeUnit.MINUTES);
		}
		running.set(false);
		checker.get(1, TimeUnit.MINUTES);
		executor.shutdown();
		PoolStatistics stats = pool.statistics();
		assertThat(handler.statistics().shrinks()).isPositive();
		assertThat(stats.trimmedBytes()).isGreaterThanOrEqualTo(handler.statistics().shrunkBytes());
		assertThat(stats.inUseBytes()).isZero();
		assertThat(stats.cachedBytes()).isEqualTo(stats.reservedBytes());
		assertThat(stats.requests()).isEqualTo(4 * 20_000);
		assertThat(stats.returns()).isEqualTo(4 * 20_000);
		assertThat(this.backend.memoryInfo().usedBytes()).isEqualTo(stats.reservedBytes());
	}

	/** Holds a worker halfway until the checker has shrunk once, so shrinks overlap allocations on any scheduler. */
	private static void awaitFirstShrink(PressureHandler handler) {
		await().atMost(Duration.ofMinutes(1)).until(() -> handler.statistics().shrinks() > 0);
	}

	@Test
	void outOfMemoryWithAnotherPoolsCacheSucceedsAfterTheHandlerTrimsIt() {
		StratifiedMemoryPool cachedElsewhere = pool("other-device", 4 * MIB);
		StratifiedMemoryPool device = pool("device", 32 * MIB);
		PressureHandler handler = PressureHandler.builder(this.backend::memoryInfo).build();
		handler.register(cachedElsewhere);
		handler.register(device);
		List<PressureChange> changes = new CopyOnWriteArrayList<>();
		handler.addListener(changes::add);
		for (int i = 0; i < 12; i++) {
			cachedElsewhere.acquire(4 * MIB).close();
		}
		List<PooledBuffer> held = new ArrayList<>();
		for (int i = 0; i < 12; i++) {
			held.add(cachedElsewhere.acquire(4 * MIB));
		}
		held.forEach(PooledBuffer::close);
		assertThat(cachedElsewhere.cachedBytes()).isEqualTo(48 * MIB);
		try (PooledBuffer big = device.acquire(24 * MIB)) {
			assertThat(big.capacity()).as("cut to the request's size from a segment of it").isEqualTo(24 * MIB);
		}
		PressureStatistics stats = handler.statistics();
		assertThat(stats.outOfMemoryRefusals()).isEqualTo(1);
		assertThat(stats.outOfMemoryFreedBytes()).as("the refused segment's size, taken from the other pool")
			.isEqualTo(24 * MIB);
		assertThat(cachedElsewhere.statistics().trimmedBytes()).as("what the out-of-memory chain and shrinks trimmed")
			.isEqualTo(stats.outOfMemoryFreedBytes() + stats.shrunkBytes());
		assertThat(stats.outOfMemoryFailures()).isZero();
		assertThat(device.statistics().allocationFailures()).isZero();
		assertThat(changes).as("a refusal the chain served changes no level").extracting(PressureChange::level)
			.doesNotContain(PressureLevel.OUT_OF_MEMORY);
	}

	@Test
	void aLevelIsLeftOnlyOnceUtilizationStayedBelowItsThresholdByTheMarginForTheMinimum() {
		AtomicLong clock = new AtomicLong();
		double[] utilization = { 0.76 };
		PressureHandler handler = PressureHandler
			.builder(() -> new MemoryInfo(Math.round((1 - utilization[0]) * CAPACITY), CAPACITY))
			.ticker(clock::get)
			.hysteresis(new PressureHysteresis(0.05, Duration.ofSeconds(10)))
			.build();
		List<PressureChange> changes = new CopyOnWriteArrayList<>();
		handler.addListener(changes::add);
		assertThat(handler.check()).isEqualTo(PressureLevel.WARNING);
		for (int i = 0; i < 100; i++) {
			clock.addAndGet(Duration.ofSeconds(1).toNanos());
			utilization[0] = (i % 2 == 0) ? 0.72 : 0.76;
			assertThat(handler.check()).as("hovering about the threshold, within the margin").isEqualTo(PressureLevel.WARNING);
		}
		for (int i = 0; i < 100; i++) {
			clock.addAndGet(Duration.ofSeconds(1).toNanos());
			utilization[0] = (i % 5 == 4) ? 0.8 : 0.6;
			assertThat(handler.check()).as("below the margin, but back above it every 5 s").isEqualTo(PressureLevel.WARNING);
		}
		clock.addAndGet(Duration.ofSeconds(1).toNanos());
		utilization[0] = 0.92;
		assertThat(handler.check()).as("up at once").isEqualTo(PressureLevel.CRITICAL);
		utilization[0] = 0.5;
		for (int i = 0; i < 10; i++) {
			assertThat(handler.check()).as("below the margin for %d s", i).isEqualTo(PressureLevel.CRITICAL);
			clock.addAndGet(Duration.ofSeconds(1).toNanos());
		}
		assertThat(handler.check()).as("below the margin for 10 s").isEqualTo(PressureLevel.NORMAL);
		assertThat(changes).extracting(PressureChange::level)
			.containsExactly(PressureLevel.WARNING, PressureLevel.CRITICAL, PressureLevel.NORMAL);
		assertThat(handler.statistics().levelChanges()).isEqualTo(3);
	}

	@Test
	void failuresInARowAreOneOutOfMemoryEpisodeLoggedOnceWithWhatItSaw() {
		AtomicLong clock = new AtomicLong();
		StratifiedMemoryPool device = pool("device", MIB);
		PressureHandler handler = PressureHandler.builder(this.backend::memoryInfo).ticker(clock::get).build();
		handler.register(device);
		List<PressureChange> changes = new CopyOnWriteArrayList<>();
		handler.addListener(changes::add);
		List<PooledBuffer> held = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			held.add(device.acquire(MIB));
		}
		try (PoolLog log = PoolLog.capture(PressureHandler.class, Level.INFO)) {
			for (int i = 0; i < 50; i++) {
				clock.addAndGet(Duration.ofMillis(100).toNanos());
				assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> device.acquire(32 * MIB));
				handler.check();
			}
			held.forEach(PooledBuffer::close);
			device.trim(0);
			clock.addAndGet(Duration.ofSeconds(9).toNanos());
			assertThat(handler.check()).as("9 s after the last failure").isEqualTo(PressureLevel.OUT_OF_MEMORY);
			clock.addAndGet(Duration.ofSeconds(1).toNanos());
			assertThat(handler.check()).isEqualTo(PressureLevel.NORMAL);
			assertThat(log.messages()).hasSize(2);
			assertThat(log.messages().get(0)).startsWith("GPU memory pressure (DEVICE memory) ELEVATED -> OUT_OF_MEMORY");
			assertThat(log.messages().get(1)).startsWith("GPU memory pressure (DEVICE memory) OUT_OF_MEMORY -> NORMAL")
				.endsWith("after 14 s out of memory: 50 allocations failed, 49 refusals while out of memory, 0 B freed for "
						+ "them");
		}
		assertThat(changes).extracting(PressureChange::level)
			.containsExactly(PressureLevel.ELEVATED, PressureLevel.OUT_OF_MEMORY, PressureLevel.NORMAL);
		assertThat(handler.statistics().outOfMemoryRefusals()).isEqualTo(50);
	}

	/** A pool closed while registered is passed over: another pool's refusal ends in our exception, not the close's. */
	@Test
	void outOfMemoryBesideAClosedRegisteredPoolIsOurException() {
		StratifiedMemoryPool closed = pool("closed", MIB);
		StratifiedMemoryPool device = pool("device", MIB);
		PressureHandler handler = PressureHandler.builder(this.backend::memoryInfo).build();
		handler.register(closed);
		handler.register(device);
		closed.close();
		List<PooledBuffer> held = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			held.add(device.acquire(MIB));
		}
		assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> device.acquire(32 * MIB));
		assertThat(handler.statistics().outOfMemoryFailures()).isEqualTo(1);
		assertThat(device.statistics().inUseBytes()).isEqualTo(40 * MIB);
		held.forEach(PooledBuffer::close);
	}

	@Test
	void outOfMemoryWithNothingCachedIsOurExceptionWithEveryCountExact() {
		StratifiedMemoryPool device = pool("device", MIB);
		PressureHandler handler = PressureHandler.builder(this.backend::memoryInfo).build();
		handler.register(device);
		List<PooledBuffer> held = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			held.add(device.acquire(MIB));
		}
		assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> device.acquire(32 * MIB))
			.satisfies((ex) -> {
				assertThat(ex.diagnostic().requestedBytes()).isEqualTo(32 * MIB);
				assertThat(ex.diagnostic().capacityBytes()).isEqualTo(CAPACITY);
				assertThat(ex.diagnostic().inUseBytes()).isEqualTo(40 * MIB);
				assertThat(ex.diagnostic().cachedBytes()).isZero();
			});
		PressureStatistics stats = handler.statistics();
		assertThat(stats.outOfMemoryRefusals()).isEqualTo(1);
		assertThat(stats.outOfMemoryFreedBytes()).isZero();
		assertThat(stats.outOfMemoryFailures()).isEqualTo(1);
		PoolStatistics pool = device.statistics();
		assertThat(pool.allocationFailures()).isEqualTo(1);
		assertThat(pool.requests()).isEqualTo(41);
		assertThat(pool.misses()).as("20 segments of two buffers each, and the refused request").isEqualTo(21);
		assertThat(pool.inUseBytes()).isEqualTo(40 * MIB);
		assertThat(pool.reservedBytes()).isEqualTo(40 * MIB);
		held.forEach(PooledBuffer::close);
	}

	@Test
	void aMemoryFractionCapsWhatThisProcessMayHold() {
		StratifiedMemoryPool device = new StratifiedMemoryPool(
				LimitingAllocator.ofFraction(this.backend.allocator(MemoryKind.DEVICE), 0.5),
				PoolConfig.builder("limited").sizeClasses(MIB).build());
		this.pools.add(device);
		List<PooledBuffer> held = new ArrayList<>();
		for (int i = 0; i < 32; i++) {
			held.add(device.acquire(MIB));
		}
		assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> device.acquire(MIB))
			.satisfies((ex) -> assertThat(ex.diagnostic().limitBytes()).isEqualTo(32 * MIB));
		held.forEach(PooledBuffer::close);
	}


	@Test
	void scheduledChecksSeeAChangeNoPoolReported() {
		StratifiedMemoryPool pool = pool("device", MIB);
		List<PooledBuffer> held = new ArrayList<>();
		for (int i = 0; i < 50; i++) {
			held.add(pool.acquire(MIB));
		}
		try (PressureHandler handler = PressureHandler.builder(this.backend::memoryInfo).build()) {
			List<PressureChange> changes = new CopyOnWriteArrayList<>();
			handler.addListener(changes::add);
			handler.start(Duration.ofMillis(10));
			await().atMost(Duration.ofMinutes(1)).until(() -> !changes.isEmpty());
			assertThat(changes).extracting(PressureChange::level).containsExactly(PressureLevel.WARNING);
			assertThat(handler.statistics().checks()).isPositive();
			assertThatIllegalArgumentException().isThrownBy(() -> handler.start(Duration.ZERO));
		}
		held.forEach(PooledBuffer::close);
	}


	@Test
	void devicePressureNeverTrimsThePinnedPoolNorPinnedPressureTheDevicePools() {
		HostBackend host = new HostBackend(CAPACITY, CAPACITY);
		StratifiedMemoryPool device = new StratifiedMemoryPool(host.allocator(MemoryKind.DEVICE),
				PoolConfig.builder("device").sizeClasses(MIB).build());
		StratifiedMemoryPool pinned = new StratifiedMemoryPool(host.allocator(MemoryKind.PINNED),
				PoolConfig.builder("pinned").sizeClasses(MIB).build());
		this.pools.add(device);
		this.pools.add(pinned);
		PressureHandler handler = PressureHandler.builder(host::memoryInfo)
			.pinnedMemory(host.allocator(MemoryKind.PINNED)::memoryInfo)
			.build();
		handler.register(device);
		handler.register(pinned);
		pinned.warm(MIB, 40);
		device.warm(MIB, 52);
		assertThat(handler.statistics().shrinks()).as("device WARNING shrank the device pool").isEqualTo(1);
		assertThat(device.cachedBytes()).isLessThanOrEqualTo((long) (0.7 * CAPACITY));
		assertThat(pinned.cachedBytes()).as("not the pinned pool").isEqualTo(40 * MIB);
		assertThat(handler.level(PressureHandler.Memory.PINNED)).isEqualTo(PressureLevel.ELEVATED);
		long deviceCached = device.cachedBytes();
		pinned.warm(MIB, 12);
		assertThat(handler.statistics().shrinks()).as("pinned WARNING shrank the pinned pool").isEqualTo(2);
		assertThat(pinned.cachedBytes()).isLessThanOrEqualTo((long) (0.7 * CAPACITY));
		assertThat(device.cachedBytes()).as("not the device pool").isEqualTo(deviceCached);
		List<PooledBuffer> held = new ArrayList<>();
		for (int i = 0; i < 64; i++) {
			held.add(pinned.acquire(MIB));
		}
		assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> pinned.acquire(MIB));
		assertThat(handler.level(PressureHandler.Memory.PINNED)).isEqualTo(PressureLevel.OUT_OF_MEMORY);
		assertThat(handler.level()).as("a pinned refusal is no device pressure").isNotEqualTo(PressureLevel.OUT_OF_MEMORY);
		assertThat(device.cachedBytes()).as("a pinned refusal trims no device pool").isEqualTo(deviceCached);
		held.forEach(PooledBuffer::close);
	}

	@Test
	void withTheDefaultsARefusalIsServedByTheOtherDevicePoolsCacheAndTheReductionCacheGetsItThroughItsPool() {
		LimitingAllocator device = new LimitingAllocator(this.backend.allocator(MemoryKind.DEVICE), 16 * MIB);
		StratifiedMemoryPool first = new StratifiedMemoryPool(device, PoolConfig.builder("first").build());
		StratifiedMemoryPool second = new StratifiedMemoryPool(device, PoolConfig.builder("second").build());
		this.pools.add(first);
		this.pools.add(second);
		PressureHandler handler = PressureHandler.builder(this.backend::memoryInfo).build();
		StratifiedMemoryPool pinned = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.PINNED),
				PoolConfig.builder("pinned").build());
		this.pools.add(pinned);
		try (ReductionBufferCache reductions = new ReductionBufferCache("reduction", second, pinned, 4)) {
			List.of(first, second).forEach(handler::register);
			first.warm(4 * MIB, 4);
			assertThat(device.allocatedBytes()).isEqualTo(16 * MIB);
			second.acquire(4 * MIB).close();
			assertThat(first.cachedBytes()).as("the other pool gave up what the request needed").isEqualTo(12 * MIB);
			second.trim(0);
			first.warm(4 * MIB, 1);
			assertThat(device.allocatedBytes()).isEqualTo(16 * MIB);
			try (ReductionBuffer sum = reductions.acquire(float.class, 1, ReductionOp.SUM)) {
				assertThat(sum.readResult(0)).isEqualTo(0f);
			}
			assertThat(first.cachedBytes()).as("the reduction cache's pool was served from the other pool's cache")
				.isLessThan(16 * MIB);
			PressureStatistics stats = handler.statistics();
			assertThat(stats.outOfMemoryRefusals()).isEqualTo(2);
			assertThat(stats.outOfMemoryFailures()).isZero();
			assertThat(reductions.statistics().allocationFailures()).isZero();
		}
	}

	@Test
	void afterAMissAStartedHandlerChecksOnItsOwnThreadNotTheRequests() {
		Set<String> readers = ConcurrentHashMap.newKeySet();
		StratifiedMemoryPool pool = pool("device", MIB);
		try (PressureHandler handler = PressureHandler.builder(() -> {
			readers.add(Thread.currentThread().getName());
			return this.backend.memoryInfo();
		}).build()) {
			handler.register(pool);
			handler.start(Duration.ofHours(1));
			try (PooledBuffer buffer = pool.acquire(MIB)) {
				await().atMost(Duration.ofMinutes(1)).until(() -> handler.statistics().checks() > 0);
			}
			assertThat(handler.statistics().checks()).isPositive();
			assertThat(readers).containsExactly("gpumem-pressure");
		}
	}

}
