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

import io.gpumem.allocator.StatisticsAllocator;
import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.arena.Arena;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A pool over expandable segments: granules mapped into reserved ranges as its spans are lent, given back one by
 * one wherever they lie free.
 */
class ExpandableSegmentsTest {

	private static final long GRANULE = 2L << 20;

	/** The step the ranges of blocks the free lists do not keep map in. */
	private static final long STEP = Arena.mappingStep(PoolConfig.DEFAULT_MAPPING_STEP_BYTES, GRANULE);

	/** The host backend's emulation and the CUDA backend on the fake driver, each a device of the given capacity. */
	static Stream<Named<LongFunction<GpuBackend>>> backends() {
		return Stream.of(Named.of("host", HostBackend::new),
				Named.of("cuda on the fake driver", (capacity) -> CudaBackend.open(new FakeCudaDriver(capacity), 0)));
	}

	/**
	 * A request cut from the back of a free span, where the back is mapped and the front is not, leaves the front
	 * free to serve: a request of all that is left maps only the granules under it, not a run past the live block.
	 */
	@ParameterizedTest
	@MethodSource("backends")
	void aRequestCutFromTheMappedBackOfAFreeSpanLeavesItsFrontToServe(LongFunction<GpuBackend> backends) {
		GpuBackend backend = backends.apply(64L << 20);
		StratifiedMemoryPool pool = pool(backend);
		PooledBuffer first = pool.acquire(STEP);
		PooledBuffer second = pool.acquire(STEP / 2 + STEP / 8);
		PooledBuffer live = pool.acquire(300 << 10);
		first.close();
		second.close();
		pool.trim(0);
		assertThat(pool.reservedBytes()).as("the first step unmapped, the second kept by the live block")
			.isEqualTo(STEP);

		PooledBuffer back = pool.acquire(1L << 20);
		assertThat(pool.reservedBytes()).as("cut from the mapped back").isEqualTo(STEP);
		PooledBuffer front = pool.acquire(STEP + STEP / 2 + STEP / 8 - (1L << 20));
		assertThat(pool.reservedBytes()).as("the front mapped, nothing past the live block").isEqualTo(2 * STEP);

		List.of(front, back, live).forEach(PooledBuffer::close);
		trimToNothingAndClose(pool, backend);
	}

	/**
	 * Keeps every third buffer of 400 mixed requests of 1 KiB to 8 MiB and trims: every stretch still mapped holds
	 * part of a live block, every live block still reads the bytes written at its ends (a run it shares with free
	 * spans stays mapped), the device holds just those stretches, and a request of all the device's free memory but
	 * a granule fits, on a device only a quarter larger than the sequence's peak: no segment boundary fragments what
	 * a trim gave back.
	 */
	@ParameterizedTest
	@MethodSource("backends")
	void aTrimAfterAFragmentingSequenceKeepsOnlyTheRunsOfLiveBlocks(LongFunction<GpuBackend> backends) {
		long peak = fragment(backends.apply(1L << 30), false).peak;
		GpuBackend backend = backends.apply(peak + peak / 4);
		Fragmented fragmented = fragment(backend, true);
		StratifiedMemoryPool pool = fragmented.pool;

		assertThat(pool.reservedBytes()).isEqualTo(used(backend)).isLessThan(fragmented.peak);
		PoolSnapshot snapshot = pool.snapshot().orElseThrow();
		assertThat(snapshot.segments()).allSatisfy((stretch) -> {
			assertThat(stretch.bytes() % GRANULE).isZero();
			assertThat(stretch.blocks()).as("a block lent in the stretch")
				.anySatisfy((block) -> assertThat(block.state()).isEqualTo(PoolSnapshot.State.LENT));
		});
		assertThat(snapshot.segments().stream().mapToLong(PoolSnapshot.SegmentView::bytes).sum())
			.isEqualTo(pool.reservedBytes());
		assertThat(fragmented.live).allSatisfy((buffer) -> assertThat(ends(buffer)).isEqualTo(mark(buffer)));

		long free = backend.allocator(MemoryKind.DEVICE).memoryInfo().freeBytes();
		try (PooledBuffer large = pool.acquire(free - GRANULE)) {
			large.fill((byte) 7);
			assertThat(pool.reservedBytes()).isEqualTo(used(backend));
		}
		fragmented.live.forEach(PooledBuffer::close);
		trimToNothingAndClose(pool, backend);
	}

	@ParameterizedTest
	@MethodSource("backends")
	void aRequestTheDeviceCannotHoldFailsAndLeavesTheBooksAsTheyWere(LongFunction<GpuBackend> backends) {
		GpuBackend backend = backends.apply(64L << 20);
		StratifiedMemoryPool pool = pool(backend);
		try (PooledBuffer held = pool.acquire(40L << 20)) {
			long reserved = pool.reservedBytes();
			assertThat(reserved).isEqualTo(mappedTo(40L << 20, 64L << 20)).isEqualTo(used(backend));
			assertThatThrownBy(() -> pool.acquire(30L << 20)).isInstanceOf(GpuOutOfMemoryException.class)
				.hasMessageContaining("tried to allocate 30.00 MiB")
				.hasMessageContaining("Its expandable segments reserve 64.00 MiB of addresses");
			PoolStatistics.Segments segments = pool.statistics().segments();
			assertThat(segments.segmentBytes()).isEqualTo(reserved);
			assertThat(segments.addressBytes()).as("one range as large as the device").isEqualTo(64L << 20);
			assertThat(pool.reservedBytes()).isEqualTo(used(backend)).isEqualTo(reserved);
			try (PooledBuffer fits = pool.acquire(20L << 20)) {
				assertThat(used(backend)).as("the rest of its last step too").isEqualTo(mappedTo(60L << 20, 64L << 20));
			}
		}
		pool.close();
		assertThat(used(backend)).isZero();
		backend.close();
	}

	/**
	 * A request that maps a granule maps the rest of its step with the same call: the requests after it in the step
	 * map nothing, and the step goes back whole once all are closed (PyTorch's large pool maps 20 MiB pages).
	 */
	@ParameterizedTest
	@MethodSource("backends")
	void aRequestMapsTheRestOfItsStepWithOneCallForTheRequestsAfterIt(LongFunction<GpuBackend> backends) {
		GpuBackend backend = backends.apply(256L << 20);
		StatisticsAllocator physical = new StatisticsAllocator(backend.virtualMemory().allocator());
		StratifiedMemoryPool pool = new StratifiedMemoryPool(physical, PoolConfig.builder("steps").build());
		List<PooledBuffer> buffers = new ArrayList<>();
		long lent = 0;
		while (lent + (600L << 10) <= STEP) {
			buffers.add(pool.acquire(600L << 10));
			lent += 600L << 10;
		}
		assertThat(physical.statistics().totalCount()).as("one call for the step").isOne();
		assertThat(pool.reservedBytes()).isEqualTo(STEP).isEqualTo(used(backend));
		buffers.remove(0).close();
		pool.trim(0);
		assertThat(pool.reservedBytes()).as("a step goes back only whole").isEqualTo(STEP);
		buffers.forEach(PooledBuffer::close);
		trimToNothingAndClose(pool, backend);
	}

	/**
	 * On a device whose free memory holds a granule but not a step (another process holds the rest), a request
	 * maps its own granule: a step is never the reason a request fails.
	 */
	@ParameterizedTest
	@MethodSource("backends")
	void aStepTheDeviceRefusesMapsTheRequestsOwnGranulesOnly(LongFunction<GpuBackend> backends) {
		GpuBackend backend = backends.apply(64L << 20);
		MemoryAllocator device = backend.allocator(MemoryKind.DEVICE);
		Allocation neighbour = device.allocate((64L << 20) - GRANULE);
		StatisticsAllocator physical = new StatisticsAllocator(backend.virtualMemory().allocator());
		StratifiedMemoryPool pool = new StratifiedMemoryPool(physical, PoolConfig.builder("refused").build());
		try (PooledBuffer buffer = pool.acquire(GRANULE / 2 + (100L << 10))) {
			buffer.fill((byte) 1);
			assertThat(pool.reservedBytes()).isEqualTo(GRANULE);
			assertThat(physical.statistics().currentBytes()).isEqualTo(GRANULE);
			assertThat(pool.statistics().allocationFailures()).isZero();
		}
		pool.close();
		device.free(neighbour);
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
		trimToNothingAndClose(pool, backend);
	}

	/**
	 * A block of a class the free lists keep once closed is cut in a range apart from any other block's, however
	 * small that is: the one never pins a granule the other's free span could give back. With a ladder of a quarter
	 * and twice the front's limit, a block of five eighths of it is no front class's, though below the limit. The one
	 * maps a granule, the other its step.
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
				assertThat(segment.blocks()).filteredOn((block) -> block.state() == PoolSnapshot.State.LENT)
					.hasSize(1);
			}).extracting(PoolSnapshot.SegmentView::bytes).containsExactlyInAnyOrder(GRANULE, STEP);
		}
		pool.close();
		backend.close();
	}

	/**
	 * A block freed long ago whose free span its neighbour, freed since, has joined: an idle trim still unmaps its
	 * runs, and keeps the neighbour's, whose step was mapped with it.
	 */
	@Test
	void anIdleTrimUnmapsTheGranulesFreedLongAgoThoughTheirSpanWasJoinedSince() {
		AtomicLong now = new AtomicLong();
		GpuBackend backend = new HostBackend(256L << 20);
		StratifiedMemoryPool pool = new StratifiedMemoryPool(backend.virtualMemory().allocator(),
				PoolConfig.builder("idle").idleTrimAfter(Duration.ofHours(1)).ticker(now::get).build());
		PooledBuffer old = pool.acquire(2 * STEP);
		PooledBuffer recent = pool.acquire(GRANULE);
		old.close();
		now.addAndGet(Duration.ofMinutes(40).toNanos());
		assertThat(pool.trimIdle()).as("as the maintenance runs, nothing idle an hour yet").isZero();
		pool.acquire(64 * 1024).close();
		recent.close();
		now.addAndGet(Duration.ofMinutes(40).toNanos());
		pool.trimIdle();
		assertThat(pool.reservedBytes()).as("the recent block's step and the small block's granule")
			.isEqualTo(STEP + GRANULE);
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
			PooledBuffer buffer = pool.acquire((long) Math.exp(Math.log(1024) + random.nextDouble() * Math.log(8192)));
			byte[] mark = mark(buffer);
			buffer.copyFrom(0, mark, 0, 1);
			buffer.copyFrom(buffer.size() - 1, mark, 1, 1);
			all.add(buffer);
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

	/** What {@link #fragment} writes at the first and the last byte of a buffer: its size's two low bytes. */
	private static byte[] mark(PooledBuffer buffer) {
		return new byte[] { (byte) buffer.size(), (byte) (buffer.size() >>> 8) };
	}

	/** The first and the last byte of a buffer. */
	private static byte[] ends(PooledBuffer buffer) {
		byte[] ends = new byte[2];
		buffer.copyTo(0, ends, 0, 1);
		buffer.copyTo(buffer.size() - 1, ends, 1, 1);
		return ends;
	}

	/** Trims {@code pool} to nothing, which must leave the device holding nothing of it, and closes both. */
	private static void trimToNothingAndClose(StratifiedMemoryPool pool, GpuBackend backend) {
		pool.trim(0);
		assertThat(pool.reservedBytes()).isZero();
		assertThat(used(backend)).isZero();
		pool.close();
		backend.close();
	}

	/** The bytes mapped from the start of a range of {@code rangeBytes} up to {@code end}: whole steps, as it holds. */
	private static long mappedTo(long end, long rangeBytes) {
		return Math.min(rangeBytes, (end + STEP - 1) / STEP * STEP);
	}

	private static long used(GpuBackend backend) {
		var info = backend.allocator(MemoryKind.DEVICE).memoryInfo();
		return info.totalBytes() - info.freeBytes();
	}

	private record Fragmented(StratifiedMemoryPool pool, List<PooledBuffer> live, long peak, long freedBytes) {
	}

}
