package io.gpumem.pool;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import java.util.stream.Stream;

import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryKind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A pool over expandable segments: granules mapped into reserved ranges as its spans are lent, given back one by
 * one wherever they lie free.
 */
class ExpandableSegmentsTest {

	private static final long GRANULE = 2L << 20;

	/** The host backend's emulation and the CUDA backend on the fake driver, each a device of the given capacity. */
	static Stream<Named<LongFunction<GpuBackend>>> backends() {
		return Stream.of(Named.of("host", HostBackend::new),
				Named.of("cuda on the fake driver", (capacity) -> CudaBackend.open(new FakeCudaDriver(capacity), 0)));
	}

	/**
	 * Keeps every third buffer of 400 mixed requests of 1 KiB to 8 MiB and trims: every granule still mapped holds
	 * part of a live block, the device holds just those granules, and a request as large as the bytes freed fits
	 * on a device only a quarter larger than the sequence's peak.
	 */
	@ParameterizedTest
	@MethodSource("backends")
	void aTrimAfterAFragmentingSequenceKeepsOnlyTheGranulesOfLiveBlocks(LongFunction<GpuBackend> backends) {
		long peak = fragment(backends.apply(1L << 30), false).peak;
		GpuBackend backend = backends.apply(peak + peak / 4);
		Fragmented fragmented = fragment(backend, true);
		StratifiedMemoryPool pool = fragmented.pool;

		assertThat(pool.reservedBytes()).isEqualTo(used(backend)).isLessThan(fragmented.peak);
		PoolSnapshot snapshot = pool.snapshot().orElseThrow();
		assertThat(snapshot.segments()).allSatisfy((segment) -> {
			assertThat(segment.bytes() % GRANULE).isZero();
			for (long granule = 0; granule < segment.bytes(); granule += GRANULE) {
				long start = granule;
				assertThat(segment.blocks()).as("a block lent in the granule at %d", start)
					.anySatisfy((block) -> {
						assertThat(block.state()).isEqualTo(PoolSnapshot.State.LENT);
						assertThat(block.offset()).isLessThan(start + GRANULE);
						assertThat(block.offset() + block.bytes()).isGreaterThan(start);
					});
			}
		});
		assertThat(snapshot.segments().stream().mapToLong(PoolSnapshot.SegmentView::bytes).sum())
			.isEqualTo(pool.reservedBytes());

		long liveGranules = pool.reservedBytes();
		try (PooledBuffer large = pool.acquire(fragmented.freedBytes)) {
			large.fill((byte) 7);
			assertThat(used(backend)).as("the live granules and the request's own, rounded up")
				.isLessThanOrEqualTo(liveGranules + (fragmented.freedBytes + 2 * GRANULE - 1) / GRANULE * GRANULE);
		}
		fragmented.live.forEach(PooledBuffer::close);
		pool.trim(0);
		assertThat(pool.reservedBytes()).isZero();
		assertThat(used(backend)).isZero();
		pool.close();
		backend.close();
	}

	@ParameterizedTest
	@MethodSource("backends")
	void aRequestTheDeviceCannotHoldFailsAndLeavesTheBooksAsTheyWere(LongFunction<GpuBackend> backends) {
		GpuBackend backend = backends.apply(64L << 20);
		StratifiedMemoryPool pool = pool(backend);
		try (PooledBuffer held = pool.acquire(40L << 20)) {
			long reserved = pool.reservedBytes();
			assertThat(reserved).isEqualTo(40L << 20).isEqualTo(used(backend));
			assertThatThrownBy(() -> pool.acquire(30L << 20)).isInstanceOf(GpuOutOfMemoryException.class)
				.hasMessageContaining("tried to allocate 30.00 MiB")
				.hasMessageContaining("Its expandable segments reserve 64.00 MiB of addresses");
			PoolStatistics.Segments segments = pool.statistics().segments();
			assertThat(segments.segmentBytes()).isEqualTo(reserved);
			assertThat(segments.addressBytes()).as("one range as large as the device").isEqualTo(64L << 20);
			assertThat(pool.reservedBytes()).isEqualTo(used(backend)).isEqualTo(reserved);
			try (PooledBuffer fits = pool.acquire(20L << 20)) {
				assertThat(used(backend)).isEqualTo(60L << 20);
			}
		}
		pool.close();
		assertThat(used(backend)).isZero();
		backend.close();
	}

	@Test
	void aRequestLargerThanARangeIsOutOfMemory() {
		GpuBackend backend = new HostBackend(4L << 30);
		StratifiedMemoryPool pool = pool(backend);
		assertThatThrownBy(() -> pool.acquire((1L << 30) + GRANULE)).isInstanceOf(GpuOutOfMemoryException.class)
			.hasMessageContaining("larger than the largest range of addresses, 1.00 GiB");
		assertThat(pool.reservedBytes()).isZero();
		pool.close();
		backend.close();
	}

	@Test
	void aBlockAboveTheTopClassSetAsideOnAShelfGoesBackToTheArena() {
		GpuBackend backend = new HostBackend(256L << 20);
		StratifiedMemoryPool pool = pool(backend);
		BufferShelf shelf = pool.shelf(1);
		assertThat(shelf.put("large", pool.acquire(100L << 20))).isTrue();
		shelf.close();
		pool.trim(0);
		assertThat(pool.reservedBytes()).isZero();
		assertThat(used(backend)).isZero();
		pool.close();
		backend.close();
	}

	/**
	 * A block of a class the free lists keep once closed is cut in a range apart from any other block's, however
	 * small that is: the one never pins a granule the other's free span could give back. With a ladder of a quarter
	 * and twice the front's limit, a block of five eighths of it is no front class's, though below the limit.
	 */
	@Test
	void aBlockTheFreeListsKeepSharesNoGranuleWithAnyOther() {
		long limit = PoolConfig.FREE_LISTS_LIMIT;
		assertKeptApart(PoolConfig.builder("default"), limit, limit + 1);
		assertKeptApart(PoolConfig.builder("ladder").sizeClasses(SizeClassLadder.of(limit / 4, 2 * limit)), limit / 4,
				limit * 5 / 8);
	}

	private static void assertKeptApart(PoolConfig.Builder config, long keptBytes, long otherBytes) {
		GpuBackend backend = new HostBackend(256L << 20);
		StratifiedMemoryPool pool = new StratifiedMemoryPool(backend.virtualMemory().allocator(), config.build());
		try (PooledBuffer kept = pool.acquire(keptBytes); PooledBuffer other = pool.acquire(otherBytes)) {
			assertThat(pool.snapshot().orElseThrow().segments()).hasSize(2).allSatisfy((segment) -> {
				assertThat(segment.bytes()).isEqualTo(GRANULE);
				assertThat(segment.blocks()).filteredOn((block) -> block.state() == PoolSnapshot.State.LENT)
					.hasSize(1);
			});
		}
		pool.close();
		backend.close();
	}

	/**
	 * A block freed long ago whose free span its neighbour, freed since, has joined: an idle trim still unmaps its
	 * granules, and keeps the neighbour's.
	 */
	@Test
	void anIdleTrimUnmapsTheGranulesFreedLongAgoThoughTheirSpanWasJoinedSince() {
		AtomicLong now = new AtomicLong();
		GpuBackend backend = new HostBackend(256L << 20);
		StratifiedMemoryPool pool = new StratifiedMemoryPool(backend.virtualMemory().allocator(),
				PoolConfig.builder("idle").idleTrimAfter(Duration.ofHours(1)).ticker(now::get).build());
		PooledBuffer old = pool.acquire(8 * GRANULE);
		PooledBuffer recent = pool.acquire(GRANULE);
		old.close();
		now.addAndGet(Duration.ofMinutes(40).toNanos());
		assertThat(pool.trimIdle()).as("as the maintenance runs, nothing idle an hour yet").isZero();
		pool.acquire(64 * 1024).close();
		recent.close();
		now.addAndGet(Duration.ofMinutes(40).toNanos());
		pool.trimIdle();
		assertThat(pool.reservedBytes()).as("the recent block's granule and the small block's")
			.isEqualTo(2 * GRANULE);
		pool.close();
		backend.close();
	}

	private static StratifiedMemoryPool pool(GpuBackend backend) {
		return new StratifiedMemoryPool(backend.virtualMemory().allocator(),
				PoolConfig.builder("expandable").oomRetries(1).build());
	}

	private static Fragmented fragment(GpuBackend backend, boolean keep) {
		StratifiedMemoryPool pool = pool(backend);
		SplittableRandom random = new SplittableRandom(400);
		List<PooledBuffer> all = new ArrayList<>();
		for (int i = 0; i < 400; i++) {
			all.add(pool.acquire((long) Math.exp(Math.log(1024) + random.nextDouble() * Math.log(8192))));
		}
		long peak = pool.reservedBytes();
		List<PooledBuffer> live = new ArrayList<>();
		long freed = 0;
		for (int i = 0; i < all.size(); i++) {
			if (i % 3 == 0) {
				live.add(all.get(i));
			}
			else {
				freed += all.get(i).size();
				all.get(i).close();
			}
		}
		pool.trim(0);
		if (!keep) {
			live.forEach(PooledBuffer::close);
			pool.close();
			backend.close();
		}
		return new Fragmented(pool, live, peak, freed);
	}

	private static long used(GpuBackend backend) {
		var info = backend.allocator(MemoryKind.DEVICE).memoryInfo();
		return info.totalBytes() - info.freeBytes();
	}

	private record Fragmented(StratifiedMemoryPool pool, List<PooledBuffer> live, long peak, long freedBytes) {
	}

}
