package io.gpumem.pool.arena;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import io.gpumem.allocator.AllocatorDecorator;
import io.gpumem.allocator.LimitingAllocator;
import io.gpumem.allocator.TrackedAllocation;
import io.gpumem.allocator.TrackingAllocator;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.DeviceHealth;
import io.gpumem.memory.GpuDeviceFailedException;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolStatistics;
import io.gpumem.pool.arena.Arena;
import io.gpumem.pool.arena.Block;
import io.gpumem.pool.arena.Span;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class ArenaTest {

	private static final long KIB = 1024;

	private static final long SEGMENT = 64 * KIB;

	private static final long MIB = 1024 * KIB;

	/** The host backend's allocation granularity, in its emulation of expandable segments. */
	private static final long GRANULE = 2 * MIB;

	private final TrackingAllocator allocator = new TrackingAllocator(
			new HostBackend(64L << 20).allocator(MemoryKind.DEVICE), false);

	private final Counts counters = new Counts();

	/** The bytes the arena holds of the allocator. */
	private final Arena arena = new Arena(this.allocator, SEGMENT, SEGMENT, this.counters, (classIndex) -> false);

	@Test
	void spansAreCutFromOneSegmentBackToBackAndAligned() {
		Span a = allocate(100);
		assertThat(segments().segments()).isEqualTo(1);
		Span b = allocate(300);
		assertThat(a.segment).isSameAs(b.segment);
		assertThat(a.offset).isZero();
		assertThat(a.size).isEqualTo(256);
		assertThat(b.offset).isEqualTo(256);
		assertThat(b.size).isEqualTo(512);
		assertThat(segments().segments()).isEqualTo(1);
		assertThat(this.arena.cachedBytes()).isEqualTo(SEGMENT - 768);
		assertThat(this.allocator.outstanding()).hasSize(1);
		assertThat(this.counters.reservedBytes(0)).as("the spans booked for their class").isEqualTo(768);
	}

	/** A cut that leaves one alignment's bytes of its span leaves them free, for the next request of that size. */
	@Test
	void aCutLeavingOneAlignmentLeavesItFree() {
		Span most = allocate(SEGMENT - Arena.ALIGNMENT);
		assertThat(most.size).isEqualTo(SEGMENT - Arena.ALIGNMENT);
		assertThat(this.arena.cachedBytes()).isEqualTo(Arena.ALIGNMENT);
		Span last = allocate(Arena.ALIGNMENT);
		assertThat(last.segment).as("the segment's last bytes").isSameAs(most.segment);
		assertThat(last.offset).isEqualTo(SEGMENT - Arena.ALIGNMENT);
	}

	@Test
	void theBestFitIsTheSmallestFreeSpanThatHoldsTheRequest() {
		List<Span> spans = cut(4 * KIB, 8 * KIB, 4 * KIB, 2 * KIB, 4 * KIB);
		free(spans.get(1), 0);
		free(spans.get(3), 0);
		Span fit = take(2 * KIB);
		assertThat(fit.offset).as("the 2 KiB hole, not the 8 KiB one").isEqualTo(spans.get(3).offset);
		Span next = take(6 * KIB);
		assertThat(next.offset).as("cut from the front of the 8 KiB hole").isEqualTo(spans.get(1).offset);
		assertThat(this.arena.take(0, SEGMENT, 0)).as("nothing free is that large").isNull();
	}

	/**
	 * A span lends the block last made of it again while it fits, and a block of its own once it was cut or merged
	 * since, or is lent for another class.
	 */
	@Test
	void aSpanLendsItsBlockAgainOnlyWhileTheBlockFits() {
		Block whole = this.arena.allocate(0, 8 * KIB, 0);
		this.arena.giveBack(whole, 0, 0, false);
		Block half = this.arena.take(0, 4 * KIB, 0);
		assertThat(half.span).as("cut anew from the merged span").isSameAs(whole.span);
		assertThat(half).isNotSameAs(whole);
		assertThat(half.size).isEqualTo(half.allocation.size()).isEqualTo(4 * KIB);

		this.arena.giveBack(half, 0, 0, false);
		assertThat(this.arena.take(0, 4 * KIB, 0)).as("the same cut, the same class").isSameAs(half);
		this.arena.giveBack(half, 0, 0, false);
		Block otherClass = this.arena.take(1, 4 * KIB, 0);
		assertThat(otherClass).isNotSameAs(half);
		assertThat(otherClass.classIndex).isEqualTo(1);
		this.arena.giveBack(otherClass, 0, 0, false);
	}

	@Test
	void aFreedSpanCoalescesWithBothFreeNeighbours() {
		List<Span> spans = cut(4 * KIB, 4 * KIB, 4 * KIB, 4 * KIB, SEGMENT - 16 * KIB);
		assertThat(segments().segments()).as("the last span fills the segment").isEqualTo(1);
		free(spans.get(0), 0);
		free(spans.get(2), 0);
		assertThat(largestFree()).isEqualTo(4 * KIB);
		free(spans.get(1), 0);
		assertThat(largestFree()).as("the first three spans in one run").isEqualTo(12 * KIB);
		free(spans.get(4), 0);
		assertThat(largestFree()).as("the last span alone").isEqualTo(SEGMENT - 16 * KIB);
		free(spans.get(3), 0);
		assertThat(largestFree()).as("the whole segment").isEqualTo(SEGMENT);
		assertThat(this.arena.cachedBytes()).isEqualTo(SEGMENT);
		assertThat(take(SEGMENT).offset).isZero();
	}

	@Test
	void onlyWholeFreeSegmentsGoBackAndTheOldestFirst() {
		Span first = allocate(SEGMENT);
		Span second = allocate(SEGMENT);
		Span third = allocate(SEGMENT / 2);
		Span pinned = allocate(SEGMENT / 4);
		assertThat(segments().segments()).isEqualTo(3);
		free(second, 5);
		free(first, 7);
		free(third, 9);
		assertThat(this.arena.release(Long.MAX_VALUE, 6)).as("free since 5 only").isEqualTo(SEGMENT);
		assertThat(this.allocator.outstanding()).extracting(TrackedAllocation::allocation)
			.doesNotContain(second.segment.allocation);
		assertThat(this.arena.release(1, Long.MAX_VALUE)).as("the older of the rest, enough for one byte")
			.isEqualTo(SEGMENT);
		assertThat(this.allocator.outstanding()).extracting(TrackedAllocation::allocation)
			.doesNotContain(first.segment.allocation);
		assertThat(this.arena.release(Long.MAX_VALUE, Long.MAX_VALUE)).as("the third holds a lent span").isZero();
		free(pinned, 10);
		assertThat(this.arena.release(Long.MAX_VALUE, Long.MAX_VALUE)).isEqualTo(SEGMENT);
		assertThat(this.allocator.outstanding()).isEmpty();
		assertThat(segments()).isEqualTo(new PoolStatistics.Segments(0, 0, 0, 0, 0));
	}

	/** A span freed at an older stamp than its neighbour (its block could not be made) is free since the later. */
	@Test
	void spansMergedAreFreeSinceTheLaterOfTheirStamps() {
		List<Span> spans = cut(SEGMENT / 2, SEGMENT / 2);
		free(spans.get(0), 9);
		free(spans.get(1), 5);
		assertThat(this.arena.release(Long.MAX_VALUE, 6)).as("part of it was freed at 9").isZero();
		assertThat(this.arena.release(Long.MAX_VALUE, 9)).isEqualTo(SEGMENT);
	}

	@Test
	void aRequestAboveHalfASegmentGetsASegmentRoundedUpToTheStep() {
		Span span = allocate(SEGMENT + 1);
		assertThat(span.size).isEqualTo(SEGMENT + 256);
		assertThat(span.segment.allocation.size()).isEqualTo(2 * SEGMENT);
		assertThat(this.arena.cachedBytes()).isEqualTo(SEGMENT - 256);
	}

	@Test
	void aSegmentRefusedWholeFallsBackToTheRequestsSize() {
		Arena tight = arena(new LimitingAllocator(this.allocator, SEGMENT / 2));
		Span span = tight.allocate(0, 10 * KIB, 0).span;
		assertThat(span.segment.allocation.size()).isEqualTo(10 * KIB);
		assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> tight.allocate(0, 30 * KIB, 0));
		assertThat(tight.pieces()).hasSize(1);
	}

	@Test
	void aWarmUpAddsFreeSegmentsWithRoomForTheSpans() {
		this.arena.grow(20 * KIB, 7, 0);
		assertThat(segments().segments()).as("three spans a segment").isEqualTo(3);
		assertThat(segments().segmentBytes()).isEqualTo(3 * SEGMENT);
		assertThat(this.arena.cachedBytes()).isEqualTo(segments().segmentBytes());
		for (int i = 0; i < 7; i++) {
			assertThat(this.arena.take(0, 20 * KIB, 0)).isNotNull();
		}
	}

	@Test
	void aSpanWhoseBlockCannotBeMadeIsFreedAgain() {
		HostBackend backend = new HostBackend(64L << 20);
		Arena failing = arena(backend.allocator(MemoryKind.DEVICE));
		failing.allocate(0, 10 * KIB, 0);
		backend.health().fail(DeviceHealth.INJECTED_ERROR, "a kernel", null);
		assertThatExceptionOfType(GpuDeviceFailedException.class).as("the new span's slice")
			.isThrownBy(() -> failing.take(0, 10 * KIB, 0));
		assertThat(this.counters.reservedBytes(0)).as("only the first span booked").isEqualTo(10 * KIB);
		assertThat(failing.cachedBytes()).isEqualTo(SEGMENT - 10 * KIB);
		assertThat(failing.pieces().get(0).parts()).extracting(Span.Part::lent).as("the rest free in one span")
			.containsExactly(true, false);
	}

	/** The device fails as a new segment is allocated: its first span is freed, and the failure is what is thrown. */
	@Test
	void aSpanOfANewSegmentWhoseBlockCannotBeMadeIsFreedAgain() {
		HostBackend backend = new HostBackend(64L << 20);
		MemoryAllocator failingAfter = new AllocatorDecorator(backend.allocator(MemoryKind.DEVICE)) {
			@Override
			public Allocation allocate(long bytes) {
				Allocation allocation = super.allocate(bytes);
				backend.health().fail(DeviceHealth.INJECTED_ERROR, "a kernel", null);
				return allocation;
			}
		};
		Arena failing = arena(failingAfter);
		assertThatExceptionOfType(GpuDeviceFailedException.class).isThrownBy(() -> failing.allocate(0, KIB, 0));
		assertThat(this.counters.reservedBytes(0)).isZero();
		assertThat(failing.pieces().get(0).parts()).extracting(Span.Part::lent).containsExactly(false);
	}

	/**
	 * Over expandable segments, a request lies at the back of its fit where its front would map a granule and its
	 * back lies in the free half of a granule partly lent: that half serves as a mapped fit, and nothing is mapped.
	 */
	@Test
	void aRequestLiesAtTheBackOfItsFitWhereThatMapsFewerGranules() {
		Arena expandable = expandableArena();
		Block first = expandable.allocate(0, 3 * MIB, 0);
		Block second = expandable.allocate(0, MIB, 0);
		expandable.giveBack(first, 0, 5, false);
		expandable.release(Long.MAX_VALUE, Long.MAX_VALUE);
		assertThat(expandable.segmentBytes()).as("the second granule, half lent").isEqualTo(GRANULE);

		Block placed = expandable.take(0, MIB, 0);
		assertThat(placed).as("a mapped fit").isNotNull();
		assertThat(placed.span.offset).as("the free half of the second granule").isEqualTo(GRANULE);
		assertThat(placed.span.freeSince).as("as the span it was cut from").isEqualTo(5);
		assertThat(expandable.segmentBytes()).isEqualTo(GRANULE);
		placed.allocation.fill(0, MIB, (byte) 7);
		assertThat(expandable.pieces().get(0).parts()).extracting(Span.Part::lent).containsExactly(true, true);
		expandable.giveBack(placed, 0, 0, false);
		expandable.giveBack(second, 0, 0, false);
		expandable.close();
		assertThat(expandable.segmentBytes()).isZero();
	}

	/**
	 * A request placed at the back of its fit maps one granule where its front would map two, and leaves the free
	 * granule before it mapped and free: nothing is unmapped to make room.
	 */
	@Test
	void aRequestAtTheBackOfItsFitMapsOneGranuleWhereItsFrontWouldMapTwo() {
		Arena expandable = expandableArena();
		List<Block> blocks = new ArrayList<>();
		for (long size : new long[] { GRANULE, GRANULE, GRANULE, GRANULE, MIB, MIB }) {
			blocks.add(expandable.allocate(0, size, 0));
		}
		for (int i : new int[] { 0, 1, 3 }) {
			expandable.giveBack(blocks.get(i), 0, 0, false);
		}
		expandable.release(Long.MAX_VALUE, Long.MAX_VALUE);
		expandable.giveBack(blocks.get(2), 0, 0, false);
		expandable.giveBack(blocks.get(4), 0, 0, false);
		assertThat(expandable.segmentBytes()).as("the third granule, free, and the fifth, half lent").isEqualTo(2 * GRANULE);

		Block placed = expandable.allocate(0, 3 * MIB, 0);
		assertThat(placed.span.offset).isEqualTo(3 * GRANULE);
		assertThat(expandable.segmentBytes()).as("the fourth granule mapped beside the third, free")
			.isEqualTo(3 * GRANULE);
		expandable.giveBack(placed, 0, 0, false);
		expandable.giveBack(blocks.get(5), 0, 0, false);
		expandable.close();
		assertThat(expandable.segmentBytes()).isZero();
	}

	@Test
	void aSpanFreedTwiceIsRefused() {
		Block block = this.arena.allocate(0, KIB, 0);
		this.arena.giveBack(block, 0, 0, false);
		assertThatIllegalStateException().isThrownBy(() -> this.arena.giveBack(block, 0, 0, false))
			.withMessageContaining("twice");
	}

	@Test
	void randomCutsAndFreesNeverOverlapAndAllCoalesceInTheEnd() {
		SplittableRandom random = new SplittableRandom(15);
		List<Span> lent = new ArrayList<>();
		for (int op = 0; op < 20_000; op++) {
			if (lent.size() > 200 || (!lent.isEmpty() && random.nextBoolean())) {
				free(lent.remove(random.nextInt(lent.size())), op);
			}
			else {
				lent.add(allocate(1 + random.nextLong(3 * SEGMENT / 2)));
			}
			if (op % 1000 == 0) {
				assertNoOverlap(lent);
			}
		}
		assertNoOverlap(lent);
		long lentBytes = lent.stream().mapToLong((span) -> span.size).sum();
		assertThat(this.arena.cachedBytes() + lentBytes).isEqualTo(segments().segmentBytes());
		assertThat(this.counters.reservedBytes(0)).as("booked as lent").isEqualTo(lentBytes);
		lent.forEach((span) -> free(span, 0));
		long held = segments().segmentBytes();
		assertThat(this.arena.cachedBytes()).isEqualTo(held);
		assertThat(this.arena.release(Long.MAX_VALUE, Long.MAX_VALUE)).as("each coalesced whole").isEqualTo(held);
		assertThat(this.allocator.outstanding()).isEmpty();
		assertThat(this.counters.reservedBytes(0)).isZero();
	}

	/** A thread makes its block outside the lock: a snapshot taken meanwhile shows its span lent, not free. */
	@Test
	void aLentSpanWhoseBlockIsStillBeingMadeIsNotFree() {
		Span lent = allocate(SEGMENT * 3 / 4);
		Block made = lent.block;
		lent.block = null;
		assertThat(this.arena.pieces().get(0).parts().get(0)).isEqualTo(new Span.Part(0, SEGMENT * 3 / 4, true, null));
		assertThat(largestFree()).as("the quarter after it").isEqualTo(SEGMENT / 4);
		lent.block = made;
		assertThat(this.arena.pieces().get(0).parts().get(0).block()).isSameAs(made);
	}

	/** An arena of expandable segments on the host backend, booking its spans in the same counters. */
	private Arena expandableArena() {
		return new Arena(new HostBackend(64L << 20).virtualMemory().allocator(), GRANULE, GRANULE, this.counters,
				(classIndex) -> false);
	}

	/** Another arena of fixed segments, over {@code allocator}, booking its spans in the same counters. */
	private Arena arena(MemoryAllocator allocator) {
		return new Arena(allocator, SEGMENT, SEGMENT, this.counters, (classIndex) -> false);
	}

	private Span allocate(long bytes) {
		return this.arena.allocate(0, bytes, 0).span;
	}

	private Span take(long bytes) {
		return this.arena.take(0, bytes, 0).span;
	}

	/** The arena's pieces as the pool's statistics show them. */
	private PoolStatistics.Segments segments() {
		return PoolStatistics.Segments.of(this.arena.pieces(), this.arena.segmentBytes(), this.arena.cachedBytes(),
				this.arena.addressBytes());
	}

	private void free(Span span, long stamp) {
		this.arena.giveBack(span.block, 0, stamp, false);
	}

	private long largestFree() {
		return segments().largestFreeBlock();
	}

	private List<Span> cut(long... sizes) {
		List<Span> spans = new ArrayList<>();
		for (long size : sizes) {
			spans.add(allocate(size));
		}
		return spans;
	}

	private static void assertNoOverlap(List<Span> spans) {
		List<Span> sorted = new ArrayList<>(spans);
		sorted.sort((a, b) -> (a.segment != b.segment) ? Long.compare(a.segment.id, b.segment.id)
				: Long.compare(a.offset, b.offset));
		for (int i = 1; i < sorted.size(); i++) {
			Span before = sorted.get(i - 1);
			Span span = sorted.get(i);
			if (before.segment == span.segment) {
				assertThat(before.offset + before.size).as("spans overlap").isLessThanOrEqualTo(span.offset);
			}
		}
	}

}
