package io.gpumem.pool;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.logging.Level;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.allocator.StatisticsAllocator;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryKind;
import io.gpumem.memory.OutOfMemoryDiagnostic;
import io.gpumem.pool.arena.Arena;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

class StratifiedMemoryPoolTest {

	private HostBackend backend = new HostBackend(64L << 20);

	private StatisticsAllocator allocator = new StatisticsAllocator(this.backend.allocator(MemoryKind.DEVICE));

	private StratifiedMemoryPool pool;

	@AfterEach
	void closePool() {
		if (this.pool != null) {
			this.pool.close();
		}
	}

	private StratifiedMemoryPool pool(PoolConfig.Builder config) {
		this.pool = new StratifiedMemoryPool(this.allocator, config.build());
		return this.pool;
	}

	/** Each block a segment of its own, so that the figures below are the blocks'; {@link ArenaTest} and
	 * {@link SharedSegmentsTest} cover blocks cut from shared segments. */
	private static PoolConfig.Builder config() {
		return PoolConfig.builder("test").segmentSize(Arena.ALIGNMENT);
	}

	@Test
	void startingLogsOneLineWithTheClassesTheWarmUpAndTheCap() {
		List<String> lines;
		try (PoolLog log = PoolLog.capture(Level.INFO)) {
			pool(config().sizeClasses(4096, 65536).warm(65536, 2).maxCachedBytes(1L << 20));
			lines = log.messages();
		}
		assertThat(lines).singleElement().asString()
			.matches("Pool 'test' \\(DEVICE\\) started: 2 size classes 4.00 KiB to 64.00 KiB, 128.00 KiB warmed in "
					+ "\\d+ ms, at most 1.00 MiB cached");
	}

	/** A listener that fails on the news of a miss is logged, and the acquire keeps the memory it was given. */
	@Test
	void aListenerThatFailsAsThePoolGrowsLosesNoBlock() {
		StratifiedMemoryPool pool = pool(config());
		pool.addListener(new PoolListener() {
			@Override
			public void reservedMemoryGrew(MemoryPool grown) {
				throw new IllegalStateException("a listener that fails");
			}
		});
		List<String> warnings;
		try (PoolLog log = PoolLog.capture(Level.WARNING)) {
			try (PooledBuffer buffer = pool.acquire(1000)) {
				assertThat(pool.statistics().inUseBytes()).isEqualTo(1024);
			}
			warnings = log.messages();
		}
		assertThat(warnings).singleElement().asString().isEqualTo("A listener of pool 'test' failed");
		PoolStatistics stats = pool.statistics();
		assertThat(stats.inUseBytes()).isZero();
		assertThat(stats.cachedBytes()).isEqualTo(1024);
		assertThat(this.allocator.statistics().currentBytes()).isEqualTo(stats.reservedBytes());
	}

	@Test
	void roundsRequestsUpAndServesTheSecondFromTheCache() {
		StratifiedMemoryPool pool = pool(config());
		PooledBuffer first = pool.acquire(1000);
		assertThat(first.size()).isEqualTo(1000);
		assertThat(first.capacity()).isEqualTo(1024);
		first.close();
		PooledBuffer second = pool.acquire(900);
		assertThat(second.capacity()).isEqualTo(1024);
		PoolStatistics stats = pool.statistics();
		assertThat(stats.requests()).isEqualTo(2);
		assertThat(stats.hits()).isEqualTo(1);
		assertThat(stats.misses()).isEqualTo(1);
		assertThat(stats.returns()).isEqualTo(1);
		assertThat(stats.hitRate()).isEqualTo(0.5);
		assertThat(stats.inUseBytes()).isEqualTo(1024);
		assertThat(stats.cachedBytes()).isZero();
		assertThat(stats.reservedBytes()).isEqualTo(1024);
		assertThat(stats.sizeClasses()).filteredOn(row -> row.sizeBytes() == 1024).singleElement()
			.isEqualTo(new SizeClassStatistics(1024, 2, 1, 1, 1, 1, 1024, 0, 0));
		second.close();
		assertThat(pool.statistics().cachedBuffers()).isEqualTo(1);
		assertThat(this.allocator.statistics().currentBytes()).isEqualTo(1024);
		assertThat(this.allocator.statistics().totalCount()).isEqualTo(1);
	}

	@Test
	void requestsAboveTheFreeListsClassesTakeTheirOwnSizeSoEvenlySpreadRequestsWasteLessThanTheLadder() {
		StratifiedMemoryPool pool = pool(PoolConfig.builder("test"));
		long[] requests = SizeClassLadderTest.logUniformRequests(1_000_000, 256, 1 << 20, 2026);
		double requested = 0;
		double reserved = 0;
		for (long request : requests) {
			requested += request;
			reserved += pool.blockSize(request);
		}
		assertThat(reserved / requested).isBetween(1.0, 1.15)
			.isLessThan(pool.sizeClasses().reservedOverRequested(requests));
		try (PooledBuffer small = pool.acquire(3000); PooledBuffer large = pool.acquire(300_001)) {
			assertThat(small.capacity()).isEqualTo(pool.blockSize(3000)).isEqualTo(3072);
			assertThat(large.capacity()).isEqualTo(pool.blockSize(300_001)).isEqualTo(300_032);
		}
	}

	@Test
	void whereAStripesRequestsRepeatTheirSizeItsLastBlockAboveTheFreeListsServesTheNextOfThatSizeOnly() {
		StratifiedMemoryPool pool = pool(PoolConfig.builder("test").stripes(1));
		pool.acquire(300_001).close();
		assertThat(pool.statistics().cachedBuffers()).as("nothing kept before a size repeats").isZero();
		PooledBuffer first = pool.acquire(300_001);
		first.copyFrom(new long[] { 0x5EED });
		first.close();
		PoolStatistics kept = pool.statistics();
		assertThat(kept.sizeClasses()).filteredOn((row) -> row.cachedBuffers() > 0).singleElement()
			.satisfies((row) -> assertThat(row.cachedBytes()).isEqualTo(300_032));
		assertThat(kept.cachedBytes()).isEqualTo(PoolConfig.DEFAULT_SEGMENT_BYTES);
		PooledBuffer sameSize = pool.acquire(300_001);
		long[] marker = new long[1];
		sameSize.copyTo(marker);
		assertThat(marker[0]).isEqualTo(0x5EED);
		assertThat(pool.statistics().cachedBuffers()).isZero();
		PooledBuffer otherSize = pool.acquire(300_300);
		sameSize.close();
		assertThat(pool.statistics().cachedBuffers()).as("sizes stopped repeating").isZero();
		otherSize.close();
		pool.acquire(300_300).close();
		assertThat(pool.statistics().cachedBuffers()).isEqualTo(1);
		PooledBuffer third = pool.acquire(300_001);
		assertThat(pool.statistics().cachedBuffers()).as("given back to the request of another size").isZero();
		third.close();
		assertThat(pool.statistics().misses()).isEqualTo(1);
		assertThat(pool.trim(0)).isEqualTo(PoolConfig.DEFAULT_SEGMENT_BYTES);
		assertThat(this.allocator.statistics().currentBytes()).isZero();
	}

	@Test
	void aStripeKeepsTheLastBlockOfARepeatedSizeOfAnyClassButNoneBeyondTheByteCap() {
		StratifiedMemoryPool pool = pool(PoolConfig.builder("test").maxCachedBytes(0));
		for (int i = 0; i < 3; i++) {
			pool.acquire(300_001).close();
		}
		assertThat(pool.statistics().cachedBuffers()).isZero();
		assertThat(this.allocator.statistics().currentBytes()).isZero();
		pool.close();
		pool = pool(PoolConfig.builder("test").stripes(1));
		long size = 16L << 20;
		pool.acquire(size).close();
		PooledBuffer first = pool.acquire(size);
		first.copyFrom(new long[] { 0x5EED });
		first.close();
		assertThat(pool.statistics().cachedBuffers()).as("kept by its stripe, above half a segment").isEqualTo(1);
		try (PooledBuffer again = pool.acquire(size)) {
			long[] marker = new long[1];
			again.copyTo(marker);
			assertThat(marker[0]).as("the same block").isEqualTo(0x5EED);
		}
		assertThat(pool.statistics().misses()).isEqualTo(1);
		assertThat(pool.trim(0)).isEqualTo(size);
		assertThat(this.allocator.statistics().currentBytes()).isZero();
	}

	@Test
	void anIdleTrimGivesBackAStripesLastBlockOnlyOnceItHasLainIdleLongEnough() {
		AtomicLong now = new AtomicLong();
		StratifiedMemoryPool pool = pool(
				PoolConfig.builder("test").stripes(1).idleTrimAfter(Duration.ofHours(1)).ticker(now::get));
		pool.acquire(300_001).close();
		pool.acquire(300_001).close();
		assertThat(pool.statistics().cachedBuffers()).as("the stripe's last block").isEqualTo(1);
		now.addAndGet(Duration.ofMinutes(40).toNanos());
		assertThat(pool.trimIdle()).as("idle 40 minutes of the hour").isZero();
		assertThat(pool.statistics().cachedBuffers()).isEqualTo(1);
		now.addAndGet(Duration.ofMinutes(40).toNanos());
		pool.trimIdle();
		assertThat(pool.statistics().cachedBuffers()).isZero();
		assertThat(pool.statistics().trimmedBytes()).as("its segment, nothing else in it")
			.isEqualTo(PoolConfig.DEFAULT_SEGMENT_BYTES);
		assertThat(this.allocator.statistics().currentBytes()).isZero();
	}

	@Test
	void requestsAboveTheTopClassAreCachedAndReusedWithinTheMargin() {
		StratifiedMemoryPool pool = pool(config().sizeClasses(256, 1024));
		PooledBuffer large = pool.acquire(5000);
		assertThat(large.capacity()).isEqualTo(5000);
		assertThat(pool.statistics().inUseBytes()).isEqualTo(5000);
		large.close();
		assertThat(pool.statistics().cachedBytes()).isEqualTo(5000);
		assertThat(pool.statistics().cachedBuffers()).isEqualTo(1);
		try (PooledBuffer smaller = pool.acquire(4000)) {
			assertThat(smaller.size()).isEqualTo(4000);
			assertThat(smaller.capacity()).isEqualTo(5000);
			assertThat(pool.statistics().inUseBytes()).as("the block lent, not the request").isEqualTo(5000);
			assertThat(pool.statistics().cachedBytes()).isZero();
		}
		assertThat(this.allocator.statistics().totalCount()).isEqualTo(1);
		PoolStatistics stats = pool.statistics();
		assertThat(stats.requests()).isEqualTo(2);
		assertThat(stats.hits()).isEqualTo(1);
		assertThat(stats.misses()).isEqualTo(1);
		assertThat(stats.returns()).isEqualTo(2);
		assertThat(stats.inUseBuffers()).isZero();
		assertThat(stats.aboveTopClass()).isEqualTo(new PoolStatistics.AboveTopClass(2, 1, 1, 2, 0, 0, 1, 5000));
		assertThat(stats.sizeClasses()).allSatisfy((row) -> assertThat(row.requests()).isZero());
		assertThat(pool.trim(0)).isEqualTo(5000);
		assertThat(pool.statistics().reservedBytes()).isZero();
		assertThat(this.allocator.statistics().currentBytes()).isZero();
	}

	@Test
	void aCachedLargeBlockServesOnlyRequestsWithinTheMarginOfIt() {
		StratifiedMemoryPool pool = pool(config().sizeClasses(256, 1024).maxCachedBytes(64L << 20));
		long big = LargeBlocks.REUSE_MARGIN + (8L << 20);
		pool.acquire(big).close();
		try (PooledBuffer small = pool.acquire(4L << 20)) {
			assertThat(this.allocator.statistics().totalCount()).as("20 MiB more than asked is too much").isEqualTo(2);
			assertThat(pool.statistics().cachedBytes()).isEqualTo(big);
		}
		try (PooledBuffer fits = pool.acquire(big - LargeBlocks.REUSE_MARGIN)) {
			assertThat(this.allocator.statistics().totalCount()).isEqualTo(2);
			assertThat(fits.capacity()).as("the smallest block that fits").isEqualTo(big);
			assertThat(pool.statistics().cachedBytes()).isEqualTo(4L << 20);
		}
		assertThat(pool.trim(0)).isEqualTo(big + (4L << 20));
		assertThat(this.allocator.statistics().currentBytes()).isZero();
	}

	@Test
	void aLargeBlockBeyondTheByteCapGoesBackToTheAllocator() {
		StratifiedMemoryPool pool = pool(config().sizeClasses(256, 1024).maxCachedBytes(8192));
		pool.acquire(6000).close();
		pool.acquire(9000).close();
		assertThat(pool.statistics().cachedBytes()).isEqualTo(6000);
		assertThat(this.allocator.statistics().currentBytes()).isEqualTo(6000);
		assertThat(pool.statistics().trimmedBytes()).isEqualTo(9000);
	}

	@Test
	void capsPerClassSendTheRestToTheArenaAndOnBytesBackToTheAllocator() {
		StratifiedMemoryPool pool = pool(config().sizeClasses(1024, 4096).maxCachedBuffers(1024, 2));
		closeAll(acquireAll(pool, 1024, 5));
		assertThat(pool.statistics().cachedBuffers()).isEqualTo(2);
		assertThat(pool.statistics().segments().freeBytes()).as("three blocks beyond the cap").isEqualTo(3 * 1024);
		assertThat(pool.statistics().cachedBytes()).isEqualTo(5 * 1024);
		assertThat(pool.trim(2048)).isEqualTo(3 * 1024);
		assertThat(pool.statistics().cachedBuffers()).isEqualTo(2);
		assertThat(this.allocator.statistics().currentBytes()).isEqualTo(2048);
		pool.close();

		StratifiedMemoryPool bytesCapped = pool(config().sizeClasses(1024, 4096).maxCachedBytes(6000));
		closeAll(acquireAll(bytesCapped, 4096, 1));
		closeAll(acquireAll(bytesCapped, 1024, 3));
		PoolStatistics stats = bytesCapped.statistics();
		assertThat(stats.cachedBytes()).isEqualTo(4096 + 1024);
		assertThat(stats.reservedBytes()).isEqualTo(stats.cachedBytes());
	}

	/**
	 * A class the free lists cache more of than it uses gives three quarters of its idle blocks, rounded up, back to
	 * the arena at each sweep of the stripe, while a class in steady use keeps its block: eight blocks of 1 KiB
	 * closed, then a 4 KiB buffer acquired and closed on the same thread until three sweeps have passed. The
	 * stripes share the returns between sweeps, down to a floor.
	 */
	@Test
	void eachSweepGivesBackThreeQuartersOfTheBlocksAClassLeftIdleAndKeepsThoseInUse() {
		PoolConfig.Builder config = config().sizeClasses(1024, 4096).stripes(4);
		int sweep = CachePolicy.sweepReturns(4);
		StratifiedMemoryPool pool = pool(config);
		closeAll(acquireAll(pool, 1024, 8));
		int returns = 8 + cycle(pool, 4096, sweep - 8);
		assertThat(cached(pool, 1024)).as("the first sweep: none idle before it").isEqualTo(8);
		returns += cycle(pool, 4096, sweep - 1);
		assertThat(cached(pool, 1024)).as("one return before the second sweep").isEqualTo(8);
		returns += cycle(pool, 4096, 1);
		assertThat(cached(pool, 1024)).isEqualTo(2);
		assertThat(pool.statistics().segments().freeBytes()).as("six back in the arena").isEqualTo(6 * 1024);
		assertThat(pool.statistics().cachedBytes()).isEqualTo(8 * 1024 + 4096);
		returns += cycle(pool, 4096, sweep);
		assertThat(returns).isEqualTo(3 * sweep);
		assertThat(cached(pool, 1024)).isZero();
		assertThat(cached(pool, 4096)).as("taken and returned between every two sweeps").isEqualTo(1);
		assertThat(row(pool, 4096).hits()).isEqualTo(returns - 8 - 1);
		long allocations = this.allocator.statistics().totalCount();
		pool.acquire(1024).close();
		assertThat(this.allocator.statistics().totalCount()).as("the arena serves it").isEqualTo(allocations);
		assertThat(List.of(1, 4, 32, 64, 512)).extracting(CachePolicy::sweepReturns).containsExactly(256, 64, 8, 8, 8);
	}

	@Test
	void warmFillsAClassWithinItsCap() {
		StratifiedMemoryPool pool = pool(config().sizeClasses(1024, 4096).maxCachedBuffers(4096, 3));
		assertThat(pool.warm(1024, 10)).isEqualTo(10);
		assertThat(pool.warm(4096, 10)).isEqualTo(3);
		PooledBuffer buffer = pool.acquire(1024);
		assertThat(pool.statistics().hits()).isEqualTo(1);
		assertThat(pool.statistics().misses()).isZero();
		buffer.close();
		assertThat(pool.statistics().cachedBytes()).isEqualTo(10 * 1024 + 3 * 4096);
		assertThatIllegalArgumentException().isThrownBy(() -> pool.warm(1000, 1))
			.withMessageContaining("cannot warm 1000 bytes: not a size class of pool 'test'")
			.withMessageContaining("[1.00 KiB, 4.00 KiB]");
		assertThatIllegalArgumentException().isThrownBy(() -> pool.warm(1024, -1))
			.withMessageContaining("must not be negative: -1");
	}

	/**
	 * The warm-up runs smallest class first, whatever order it was configured in (13 classes given largest first come
	 * out sorted): a class above the front warms free room in the arena, which the front's blocks, cut after it at
	 * start, would otherwise take.
	 */
	@Test
	void theWarmUpRunsSmallestClassFirstSoThatTheRoomWarmedInTheArenaStaysFree() {
		PoolConfig.Builder reversed = config().sizeClasses(SizeClassLadder.geometric(256, 1 << 20, 1, 256));
		for (long size = 1 << 20; size >= 256; size /= 2) {
			reversed.warm(size, 1);
		}
		assertThat(List.copyOf(reversed.build().warm().keySet())).isSorted().hasSize(13);
		PoolConfig.Builder config = config().sizeClasses(4096, 65536, 262144).warm(262144, 2).warm(65536, 3)
			.warm(4096, 8);
		StratifiedMemoryPool pool = pool(config);
		assertThat(pool.statistics().sizeClasses()).extracting(SizeClassStatistics::cachedBuffers)
			.containsExactly(8L, 3L, 0L);
		assertThat(pool.statistics().segments().freeBytes()).isEqualTo(2 * 262144);
	}

	@Test
	void presetsWarmTheirClasses() {
		StratifiedMemoryPool pool = pool(config().preset(PoolPreset.GRAPH_ANALYTICS));
		assertThat(pool.statistics().sizeClasses()).extracting(SizeClassStatistics::cachedBuffers)
			.containsExactly(1000L, 500L, 100L, 20L, 5L, 0L);
		assertThat(pool.statistics().segments().freeBytes())
			.as("the 256 KiB class, above the front, warmed in the arena")
			.isGreaterThanOrEqualTo(2 * 262144);
		pool.close();
		StratifiedMemoryPool simulation = pool(config().preset(PoolPreset.SIMULATION));
		assertThat(simulation.statistics().sizeClasses()).extracting(SizeClassStatistics::cachedBuffers)
			.containsExactly(50L, 100L, 500L, 250L, 20L, 0L);
		assertThat(simulation.statistics().segments().freeBytes()).isGreaterThanOrEqualTo(5 * 262144);
		assertThat(PoolPreset.fromConfigName("graph-analytics")).isEqualTo(PoolPreset.GRAPH_ANALYTICS);
		assertThatIllegalArgumentException().isThrownBy(() -> PoolPreset.fromConfigName("huge"))
			.withMessageContaining("unknown pool preset 'huge'");
	}

	@Test
	void aMissTakesACachedBufferOfTheNextClassWhenItIsAtMostAQuarterLarger() {
		StratifiedMemoryPool pool = pool(config().sizeClasses(1024, 1280, 2048));
		pool.acquire(1280).close();
		PooledBuffer upgraded = pool.acquire(1000);
		assertThat(upgraded.capacity()).isEqualTo(1280);
		assertThat(row(pool, 1024)).extracting(SizeClassStatistics::requests, SizeClassStatistics::hits,
				SizeClassStatistics::misses).containsExactly(1L, 1L, 0L);
		assertThat(row(pool, 1280).inUseBuffers()).isEqualTo(1);
		upgraded.close();
		assertThat(row(pool, 1280).cachedBuffers()).as("back to its own class").isEqualTo(1);
		pool.acquire(2048).close();
		assertThat(pool.acquire(1100).capacity()).as("the cached 1280 B buffer").isEqualTo(1280);
		assertThat(pool.acquire(1100).capacity()).as("a new block: 2048 is more than a quarter above 1280")
			.isEqualTo(1280);
		assertThat(this.allocator.statistics().totalCount()).isEqualTo(3);
	}

	@Test
	void trimReleasesTheLeastRecentlyUsedFirst() {
		StratifiedMemoryPool pool = pool(config().sizeClasses(1024, 4096));
		PooledBuffer a = pool.acquire(1024);
		PooledBuffer b = pool.acquire(4096);
		PooledBuffer c = pool.acquire(1024);
		a.close();
		pool.tick();
		b.close();
		pool.tick();
		c.close();
		assertThat(pool.trim(4096 + 1024)).isEqualTo(1024);
		assertThat(cached(pool, 1024)).isEqualTo(1);
		assertThat(cached(pool, 4096)).isEqualTo(1);
		assertThat(pool.trim(1024)).isEqualTo(4096);
		assertThat(cached(pool, 1024)).isEqualTo(1);
		assertThat(cached(pool, 4096)).isZero();
		assertThat(pool.trim(0)).isEqualTo(1024);
		PoolStatistics stats = pool.statistics();
		assertThat(stats.trimmedBytes()).isEqualTo(4096 + 2048);
		assertThat(stats.reservedBytes()).isZero();
		assertThat(this.allocator.statistics().currentBytes()).isZero();
		assertThatIllegalArgumentException().isThrownBy(() -> pool.trim(-1))
			.withMessageContaining("trim target must not be negative: -1 bytes");
	}

	/**
	 * The maintenance trims what stayed cached {@code idle-trim-after} on the pool's clock: nothing while the clock
	 * stands still, however often it runs, and everything once the clock has moved past.
	 */
	@Test
	void idleBuffersAreTrimmedInTheBackground() throws InterruptedException {
		AtomicLong now = new AtomicLong();
		Thread test = Thread.currentThread();
		CountDownLatch readInBackground = new CountDownLatch(3);
		LongSupplier ticker = () -> {
			if (Thread.currentThread() != test) {
				readInBackground.countDown();
			}
			return now.get();
		};
		StratifiedMemoryPool pool = pool(
				config().sizeClasses(1024, 4096).idleTrimAfter(Duration.ofMillis(40)).ticker(ticker));
		closeAll(acquireAll(pool, 4096, 3));
		pool.acquire(100_000).close();
		assertThat(pool.statistics().cachedBuffers()).as("three of a class and one above the top class").isEqualTo(4);
		assertThat(readInBackground.await(1, TimeUnit.MINUTES)).as("the maintenance read the clock").isTrue();
		assertThat(pool.statistics().cachedBuffers()).as("a maintenance run done, the clock not moved").isEqualTo(4);
		now.addAndGet(Duration.ofMinutes(1).toNanos());
		long trimmed = 3 * 4096 + 100_000;
		await().atMost(Duration.ofMinutes(1))
			.until(() -> pool.statistics().cachedBuffers() == 0 && pool.statistics().trimmedBytes() >= trimmed);
		assertThat(pool.statistics().cachedBuffers()).isZero();
		assertThat(pool.statistics().trimmedBytes()).as("counted once the segment has gone back").isEqualTo(trimmed);
		assertThat(this.allocator.statistics().currentBytes()).isZero();
	}

	@Test
	void recentlyUsedBuffersSurviveAnIdleTrim() {
		StratifiedMemoryPool pool = pool(config().idleTrimAfter(Duration.ofHours(1)));
		closeAll(acquireAll(pool, 4096, 2));
		assertThat(pool.trimIdle()).isZero();
		assertThat(pool.statistics().cachedBuffers()).isEqualTo(2);
	}

	@Test
	void outOfMemoryTrimsCachedBuffersAndRetries() {
		this.backend = new HostBackend(8192);
		this.allocator = new StatisticsAllocator(this.backend.allocator(MemoryKind.DEVICE));
		StratifiedMemoryPool pool = pool(config().sizeClasses(1024, 4096));
		closeAll(acquireAll(pool, 1024, 4));
		PooledBuffer first = pool.acquire(4096);
		PooledBuffer second = pool.acquire(4096);
		PoolStatistics stats = pool.statistics();
		assertThat(stats.trimmedBytes()).isEqualTo(4096);
		assertThat(stats.inUseBytes()).isEqualTo(8192);
		assertThat(stats.cachedBytes()).isZero();
		assertThat(stats.allocationFailures()).isZero();
		assertThat(this.allocator.statistics().failedCount()).isEqualTo(1);
		first.close();
		second.close();
	}

	@Test
	void outOfMemoryFreesACachedLargeBlockAndRetries() {
		this.backend = new HostBackend(8192);
		this.allocator = new StatisticsAllocator(this.backend.allocator(MemoryKind.DEVICE));
		StratifiedMemoryPool pool = pool(config().sizeClasses(1024, 4096));
		pool.acquire(6000).close();
		try (PooledBuffer buffer = pool.acquire(4096)) {
			assertThat(pool.statistics().trimmedBytes()).isEqualTo(6000);
			assertThat(pool.statistics().cachedBytes()).isZero();
			assertThat(this.allocator.statistics().currentBytes()).isEqualTo(4096);
		}
	}

	@Test
	void outOfMemoryWithNothingCachedFailsWithTheDiagnosticAndExactCounts() {
		this.backend = new HostBackend(8192);
		this.allocator = new StatisticsAllocator(this.backend.allocator(MemoryKind.DEVICE));
		StratifiedMemoryPool pool = pool(config().sizeClasses(1024, 4096));
		PooledBuffer first = pool.acquire(4096);
		PooledBuffer second = pool.acquire(3000);
		assertThatThrownBy(() -> pool.acquire(100)).isInstanceOf(GpuOutOfMemoryException.class)
			.hasMessageContaining("tried to allocate 1.00 KiB")
			.satisfies(ex -> {
				OutOfMemoryDiagnostic diagnostic = ((GpuOutOfMemoryException) ex).diagnostic();
				assertThat(diagnostic.requestedBytes()).isEqualTo(1024);
				assertThat(diagnostic.capacityBytes()).isEqualTo(8192);
				assertThat(diagnostic.freeBytes()).isZero();
				assertThat(diagnostic.inUseBytes()).isEqualTo(8192);
				assertThat(diagnostic.cachedBytes()).isZero();
				assertThat(diagnostic.largestClassBytes()).isEqualTo(4096);
				assertThat(ex.getMessage()).contains("This process has 8.00 KiB in use and 0 B cached");
			});
		PoolStatistics stats = pool.statistics();
		assertThat(stats.requests()).isEqualTo(3);
		assertThat(stats.hits() + stats.misses()).isEqualTo(3);
		assertThat(stats.allocationFailures()).isEqualTo(1);
		assertThat(stats.inUseBytes()).isEqualTo(8192);
		assertThat(stats.reservedBytes()).isEqualTo(8192);
		assertThat(this.allocator.statistics().currentBytes()).isEqualTo(8192);
		first.close();
		second.close();
		assertThat(pool.acquire(100).capacity()).isEqualTo(1024);
	}

	@Test
	void badRequestsAreRefusedWithTheValueAndTheRule() {
		StratifiedMemoryPool pool = pool(config());
		assertThatIllegalArgumentException().isThrownBy(() -> pool.acquire(0))
			.withMessage("buffer size must be positive: 0");
		assertThatIllegalArgumentException().isThrownBy(() -> pool.acquire(-5))
			.withMessage("buffer size must be positive: -5");
		assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> pool.acquire(Long.MAX_VALUE))
			.withMessageContaining("The device has a total capacity of");
		PoolStatistics stats = pool.statistics();
		assertThat(stats.reservedBytes()).isZero();
		assertThat(stats.inUseBuffers()).isZero();
		assertThat(stats.requests()).isEqualTo(stats.hits() + stats.misses());
		assertThatIllegalArgumentException()
			.isThrownBy(() -> PoolConfig.builder("bad").sizeClasses(1024).maxCachedBuffers(1000, 1).build())
			.withMessageStartingWith("max-cached-buffers[1000B] names 1000 bytes, which is not a size class of pool 'bad'");
		assertThatIllegalArgumentException().isThrownBy(() -> PoolConfig.builder(" "));
		assertThatIllegalArgumentException().isThrownBy(() -> config().maxCachedBytes(-1))
			.withMessageContaining("-1");
		assertThatIllegalArgumentException().isThrownBy(() -> config().idleTrimAfter(Duration.ofSeconds(-1)));
	}

	@Test
	void aClosedPoolRefusesWorkAndFreesBuffersClosedLater() {
		StratifiedMemoryPool pool = pool(config());
		closeAll(acquireAll(pool, 512, 3));
		PooledBuffer lent = pool.acquire(4096);
		pool.close();
		assertThat(pool.isClosed()).isTrue();
		assertThat(this.allocator.statistics().currentBytes()).isEqualTo(4096);
		assertThatIllegalStateException().isThrownBy(() -> pool.acquire(1)).withMessage("pool 'test' is closed");
		assertThatIllegalStateException().isThrownBy(() -> pool.warm(512, 1)).withMessage("pool 'test' is closed");
		assertThatIllegalStateException().isThrownBy(() -> pool.trim(0)).withMessage("pool 'test' is closed");
		lent.close();
		assertThat(this.allocator.statistics().currentBytes()).isZero();
		assertThat(this.backend.memoryInfo().freeBytes()).isEqualTo(64L << 20);
		pool.close();
	}

	@Test
	void leakedBuffersAreReclaimedAndCounted() throws InterruptedException {
		for (LeakDetection level : new LeakDetection[] { LeakDetection.SIMPLE, LeakDetection.PARANOID }) {
			StratifiedMemoryPool pool = pool(config().leakDetection(level));
			leak(pool, 2048);
			awaitLeaks(pool, 1);
			PoolStatistics stats = pool.statistics();
			assertThat(stats.leakedBuffers()).as(level.name()).isEqualTo(1);
			assertThat(stats.inUseBuffers()).isZero();
			assertThat(stats.cachedBytes()).isEqualTo(2048);
			assertThat(pool.acquire(2048).capacity()).isEqualTo(2048);
			assertThat(pool.statistics().hits()).isEqualTo(1);
			pool.close();
		}
	}

	@Test
	void aLeakReclaimedByAnotherRunningThreadGoesToTheSharedListsWhereATrimReachesIt() throws Exception {
		StratifiedMemoryPool pool = pool(config().leakDetection(LeakDetection.PARANOID));
		leak(pool, 2048);
		CountDownLatch reclaimed = new CountDownLatch(1);
		CountDownLatch checked = new CountDownLatch(1);
		Thread watcher = new Thread(() -> {
			awaitLeaks(pool, 1);
			reclaimed.countDown();
			waitFor(checked);
		});
		watcher.start();
		reclaimed.await();
		assertThat(pool.statistics().leakedBuffers()).isEqualTo(1);
		assertThat(pool.trim(0)).as("the watcher is still running").isEqualTo(2048);
		checked.countDown();
		watcher.join();
	}

	@Test
	void withLeakDetectionDisabledALeakedBufferStaysInUse() {
		StratifiedMemoryPool pool = pool(config().leakDetection(LeakDetection.DISABLED));
		awaitCollected(leak(pool, 2048));
		assertThat(pool.trim(0)).as("a trim, which reclaims what leak detection watches").isZero();
		assertThat(pool.statistics().leakedBuffers()).isZero();
		assertThat(pool.statistics().inUseBuffers()).isEqualTo(1);
	}

	@Test
	void leakDetectionSimpleWatchesEveryBufferOfSixtyFourKibibytesOrMore() throws InterruptedException {
		StratifiedMemoryPool pool = pool(config().leakDetection(LeakDetection.SIMPLE));
		for (int i = 0; i < 3; i++) {
			pool.acquire(64 << 10).close();
		}
		leak(pool, 64 << 10);
		awaitLeaks(pool, 1);
		PoolStatistics stats = pool.statistics();
		assertThat(stats.leakedBuffers()).as("the block's fourth lend was watched").isEqualTo(1);
		assertThat(stats.inUseBuffers()).isZero();
		assertThat(stats.cachedBytes()).isEqualTo(64 << 10);
	}

	@Test
	void leakDetectionSimpleWatchesEveryAllocatingAcquireAndOneOtherInAHundredAndTwentyEightPerThread()
			throws InterruptedException {
		StratifiedMemoryPool pool = pool(config().leakDetection(LeakDetection.SIMPLE));
		int hits = 2 * LeakWatch.SAMPLING_INTERVAL;
		pool.warm(2048, hits);
		List<WeakReference<PooledBuffer>> leaked = new ArrayList<>();
		Thread leaker = new Thread(() -> {
			for (int i = 0; i < hits; i++) {
				leaked.add(leak(pool, 2048));
			}
		});
		leaker.start();
		leaker.join();
		awaitLeaks(pool, 2);
		leaked.forEach(StratifiedMemoryPoolTest::awaitCollected);
		pool.trim(0);
		assertThat(pool.statistics().leakedBuffers()).as("the thread's acquires 1 and 129").isEqualTo(2);
		assertThat(pool.statistics().inUseBuffers()).isEqualTo(hits - 2);
		leak(pool, 4096);
		awaitLeaks(pool, 3);
		assertThat(pool.statistics().leakedBuffers()).as("an acquire that allocated").isEqualTo(3);
		assertThat(row(pool, 4096).cachedBuffers()).isEqualTo(1);
	}

	@Test
	void leakDetectionSimpleWatchesEveryBufferAboveTheTopClass() throws InterruptedException {
		StratifiedMemoryPool pool = pool(config().sizeClasses(1024, 4096).leakDetection(LeakDetection.SIMPLE));
		pool.acquire(1024).close();
		leak(pool, 8192);
		awaitLeaks(pool, 1);
		assertThat(pool.statistics().leakedBuffers()).isEqualTo(1);
		assertThat(pool.statistics().inUseBytes()).isZero();
		assertThat(pool.statistics().cachedBytes()).as("the large block came back to the cache").isEqualTo(1024 + 8192);
		pool.trim(0);
		assertThat(this.allocator.statistics().currentBytes()).isZero();
	}

	@Test
	void aBufferClosedOnOneThreadServesTheNextRequestOnAnother() throws Exception {
		StratifiedMemoryPool pool = pool(config());
		Thread worker = new Thread(() -> closeAll(acquireAll(pool, 4096, 3)));
		worker.start();
		worker.join();
		PooledBuffer[] again = acquireAll(pool, 4096, 3);
		PoolStatistics stats = pool.statistics();
		assertThat(stats.requests()).isEqualTo(6);
		assertThat(stats.hits()).isEqualTo(3);
		assertThat(stats.misses()).isEqualTo(3);
		assertThat(stats.returns()).isEqualTo(3);
		assertThat(this.allocator.statistics().totalCount()).isEqualTo(3);
		closeAll(again);
	}

	@Test
	void trimReachesEveryBufferWhileTheThreadsThatClosedThemAreAliveAndIdle() throws Exception {
		StratifiedMemoryPool pool = pool(config());
		int workers = 8;
		CountDownLatch acquired = new CountDownLatch(workers);
		CountDownLatch cached = new CountDownLatch(workers);
		CountDownLatch checked = new CountDownLatch(1);
		List<Thread> threads = new ArrayList<>();
		for (int w = 0; w < workers; w++) {
			long size = 4096L << (w % 4);
			Thread worker = new Thread(() -> {
				PooledBuffer[] buffers = acquireAll(pool, size, 3);
				acquired.countDown();
				waitFor(acquired);
				closeAll(buffers);
				cached.countDown();
				waitFor(checked);
			});
			threads.add(worker);
			worker.start();
		}
		cached.await();
		long cachedBytes = pool.cachedBytes();
		assertThat(cachedBytes).isEqualTo(2 * 3 * (4096 + 8192 + 16384 + 32768));
		assertThat(pool.trim(0)).isEqualTo(cachedBytes);
		assertThat(pool.reservedBytes()).isZero();
		assertThat(this.allocator.statistics().currentBytes()).isZero();
		assertThat(threads).allMatch(Thread::isAlive);
		checked.countDown();
		for (Thread thread : threads) {
			thread.join();
		}
	}

	@Test
	void statisticsChangeNothing() throws InterruptedException {
		StratifiedMemoryPool pool = pool(config().leakDetection(LeakDetection.PARANOID));
		CountDownLatch maintenanceHeld = new CountDownLatch(1);
		CountDownLatch released = new CountDownLatch(1);
		ScheduledFuture<?> holder = Maintenance.schedule(() -> {
			maintenanceHeld.countDown();
			waitFor(released);
		}, 4_000_000L);
		try {
			maintenanceHeld.await();
			awaitCollected(leak(pool, 2048));
			PoolStatistics first = pool.statistics();
			PoolStatistics second = pool.statistics();
			assertThat(second).isEqualTo(first);
			assertThat(first.leakedBuffers()).isZero();
			assertThat(first.inUseBuffers()).as("reclaiming is the maintenance's work, held here").isEqualTo(1);
			assertThat(pool.trim(0)).as("a trim takes the leaked buffer back, and frees it").isEqualTo(2048);
			assertThat(pool.statistics().leakedBuffers()).isEqualTo(1);
		}
		finally {
			holder.cancel(false);
			released.countDown();
		}
	}

	@Test
	void theFiguresReadWithoutASnapshotAgreeWithIt() {
		StratifiedMemoryPool pool = pool(config().sizeClasses(1024, 4096).maxCachedBuffers(1024, 1));
		PooledBuffer[] small = acquireAll(pool, 1000, 3);
		PooledBuffer large = pool.acquire(10_000);
		PooledBuffer medium = pool.acquire(4096);
		closeAll(small);
		medium.close();
		pool.acquire(4096).close();
		PoolStatistics stats = pool.statistics();
		assertThat(pool.usedBytes()).isEqualTo(stats.inUseBytes()).isEqualTo(10_000);
		assertThat(stats.inUseBuffers()).isEqualTo(1);
		assertThat(pool.cachedBytes()).as("two buffers in the lists, two beyond the cap in the arena")
			.isEqualTo(stats.cachedBytes())
			.isEqualTo(1024 + 4096 + 2 * 1024);
		assertThat(pool.reservedBytes()).isEqualTo(stats.reservedBytes());
		assertThat(stats.cachedBuffers()).isEqualTo(2);
		assertThat(stats.hits()).isEqualTo(1);
		assertThat(stats.misses()).isEqualTo(5);
		assertThat(stats.trimmedBytes()).isZero();
		assertThat(stats.allocationFailures()).isZero();
		large.close();
	}

	private static void waitFor(CountDownLatch latch) {
		try {
			latch.await();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** Acquires a buffer and drops it unclosed; the reference clears once the collector has found it unreachable. */
	private static WeakReference<PooledBuffer> leak(StratifiedMemoryPool pool, long bytes) {
		PooledBuffer buffer = pool.acquire(bytes);
		buffer.fill((byte) 1);
		return new WeakReference<>(buffer);
	}

	private static void awaitCollected(WeakReference<PooledBuffer> leaked) {
		await().atMost(Duration.ofMinutes(1)).until(() -> {
			System.gc();
			return leaked.refersTo(null);
		});
	}

	private static void awaitLeaks(StratifiedMemoryPool pool, long count) {
		await().atMost(Duration.ofMinutes(1)).until(() -> {
			System.gc();
			return pool.statistics().leakedBuffers() >= count;
		});
	}

	private static long cached(StratifiedMemoryPool pool, long classSize) {
		return row(pool, classSize).cachedBuffers();
	}

	private static SizeClassStatistics row(StratifiedMemoryPool pool, long classSize) {
		return pool.statistics().sizeClasses().stream().filter(row -> row.sizeBytes() == classSize).findFirst()
			.orElseThrow();
	}

	private static PooledBuffer[] acquireAll(StratifiedMemoryPool pool, long bytes, int count) {
		PooledBuffer[] buffers = new PooledBuffer[count];
		for (int i = 0; i < count; i++) {
			buffers[i] = pool.acquire(bytes);
		}
		return buffers;
	}

	/** Acquires and closes a buffer of {@code bytes} {@code times} times, and answers how many. */
	private static int cycle(StratifiedMemoryPool pool, long bytes, int times) {
		for (int i = 0; i < times; i++) {
			pool.acquire(bytes).close();
		}
		return times;
	}

	private static void closeAll(PooledBuffer[] buffers) {
		for (PooledBuffer buffer : buffers) {
			buffer.close();
		}
	}

}
