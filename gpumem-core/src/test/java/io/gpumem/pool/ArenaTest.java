package io.gpumem.pool;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import io.gpumem.allocator.LimitingAllocator;
import io.gpumem.allocator.TrackingAllocator;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryKind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class ArenaTest {

	private static final long KIB = 1024;

	private static final long SEGMENT = 64 * KIB;

	private final TrackingAllocator allocator = new TrackingAllocator(
			new HostBackend(64L << 20).allocator(MemoryKind.DEVICE), false);

	private final Arena arena = new Arena(this.allocator, SEGMENT);

	@Test
	void spansAreCutFromOneSegmentBackToBackAndAligned() {
		Arena.Span a = this.arena.allocate(100);
		Arena.Span b = this.arena.allocate(300);
		assertThat(a.grew).isTrue();
		assertThat(b.grew).isFalse();
		assertThat(a.segment).isSameAs(b.segment);
		assertThat(a.offset).isZero();
		assertThat(a.size).isEqualTo(256);
		assertThat(b.offset).isEqualTo(256);
		assertThat(b.size).isEqualTo(512);
		assertThat(this.arena.segments()).isEqualTo(1);
		assertThat(this.arena.freeBytes()).isEqualTo(SEGMENT - 768);
		assertThat(this.allocator.outstanding()).hasSize(1);
	}

	@Test
	void theBestFitIsTheSmallestFreeSpanThatHoldsTheRequest() {
		List<Arena.Span> spans = cut(4 * KIB, 8 * KIB, 4 * KIB, 2 * KIB, 4 * KIB);
		this.arena.free(spans.get(1), 0);
		this.arena.free(spans.get(3), 0);
		Arena.Span fit = this.arena.take(2 * KIB);
		assertThat(fit.offset).as("the 2 KiB hole, not the 8 KiB one").isEqualTo(spans.get(3).offset);
		Arena.Span next = this.arena.take(6 * KIB);
		assertThat(next.offset).as("cut from the front of the 8 KiB hole").isEqualTo(spans.get(1).offset);
		assertThat(this.arena.take(SEGMENT)).as("nothing free is that large").isNull();
	}

	@Test
	void aFreedSpanCoalescesWithBothFreeNeighbours() {
		List<Arena.Span> spans = cut(4 * KIB, 4 * KIB, 4 * KIB, 4 * KIB, SEGMENT - 16 * KIB);
		assertThat(this.arena.segments()).as("the last span fills the segment").isEqualTo(1);
		this.arena.free(spans.get(0), 0);
		this.arena.free(spans.get(2), 0);
		assertThat(this.arena.largestFree()).isEqualTo(4 * KIB);
		this.arena.free(spans.get(1), 0);
		assertThat(this.arena.largestFree()).as("the first three spans in one run").isEqualTo(12 * KIB);
		this.arena.free(spans.get(4), 0);
		assertThat(this.arena.largestFree()).as("the last span alone").isEqualTo(SEGMENT - 16 * KIB);
		this.arena.free(spans.get(3), 0);
		assertThat(this.arena.largestFree()).as("the whole segment").isEqualTo(SEGMENT);
		assertThat(this.arena.freeBytes()).isEqualTo(SEGMENT);
		assertThat(this.arena.take(SEGMENT).offset).isZero();
	}

	@Test
	void onlyWholeFreeSegmentsGoBackAndTheOldestFirst() {
		Arena.Span first = this.arena.allocate(SEGMENT);
		Arena.Span second = this.arena.allocate(SEGMENT);
		Arena.Span third = this.arena.allocate(SEGMENT / 2);
		Arena.Span pinned = this.arena.allocate(SEGMENT / 4);
		assertThat(this.arena.segments()).isEqualTo(3);
		this.arena.free(second, 5);
		this.arena.free(first, 7);
		this.arena.free(third, 9);
		assertThat(this.arena.removeFreeSegments(Long.MAX_VALUE, 6)).as("free since 5 only")
			.containsExactly(second.segment.allocation);
		List<Allocation> removed = this.arena.removeFreeSegments(1, Long.MAX_VALUE);
		assertThat(removed).as("the older of the rest, enough for one byte").containsExactly(first.segment.allocation);
		assertThat(this.arena.removeFreeSegments(Long.MAX_VALUE, Long.MAX_VALUE)).as("the third holds a lent span")
			.isEmpty();
		this.arena.free(pinned, 10);
		assertThat(this.arena.removeFreeSegments(Long.MAX_VALUE, Long.MAX_VALUE))
			.containsExactly(third.segment.allocation);
		assertThat(this.arena.segments()).isZero();
		assertThat(this.arena.segmentBytes()).isZero();
		assertThat(this.arena.freeBytes()).isZero();
	}

	@Test
	void aRequestAboveHalfASegmentGetsASegmentRoundedUpToTheStep() {
		Arena.Span span = this.arena.allocate(SEGMENT + 1);
		assertThat(span.size).isEqualTo(SEGMENT + 256);
		assertThat(span.segment.allocation.size()).isEqualTo(2 * SEGMENT);
		assertThat(this.arena.freeBytes()).isEqualTo(SEGMENT - 256);
	}

	@Test
	void aSegmentRefusedWholeFallsBackToTheRequestsSize() {
		Arena tight = new Arena(new LimitingAllocator(this.allocator, SEGMENT / 2), SEGMENT);
		Arena.Span span = tight.allocate(10 * KIB);
		assertThat(span.segment.allocation.size()).isEqualTo(10 * KIB);
		assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> tight.allocate(30 * KIB));
		assertThat(tight.segments()).isEqualTo(1);
	}

	@Test
	void aWarmUpAddsFreeSegmentsWithRoomForTheSpans() {
		this.arena.grow(20 * KIB, 7);
		assertThat(this.arena.segments()).as("three spans a segment").isEqualTo(3);
		assertThat(this.arena.segmentBytes()).isEqualTo(3 * SEGMENT);
		assertThat(this.arena.freeBytes()).isEqualTo(this.arena.segmentBytes());
		for (int i = 0; i < 7; i++) {
			assertThat(this.arena.take(20 * KIB)).isNotNull();
		}
	}

	@Test
	void aSpanFreedTwiceIsRefused() {
		Arena.Span span = this.arena.allocate(KIB);
		this.arena.free(span, 0);
		assertThatIllegalStateException().isThrownBy(() -> this.arena.free(span, 0)).withMessageContaining("twice");
	}

	@Test
	void randomCutsAndFreesNeverOverlapAndAllCoalesceInTheEnd() {
		SplittableRandom random = new SplittableRandom(15);
		List<Arena.Span> lent = new ArrayList<>();
		for (int op = 0; op < 20_000; op++) {
			if (lent.size() > 200 || (!lent.isEmpty() && random.nextBoolean())) {
				this.arena.free(lent.remove(random.nextInt(lent.size())), op);
			}
			else {
				lent.add(this.arena.allocate(1 + random.nextLong(3 * SEGMENT / 2)));
			}
			if (op % 1000 == 0) {
				assertNoOverlap(lent);
			}
		}
		assertNoOverlap(lent);
		long lentBytes = lent.stream().mapToLong((span) -> span.size).sum();
		assertThat(this.arena.freeBytes() + lentBytes).isEqualTo(this.arena.segmentBytes());
		lent.forEach((span) -> this.arena.free(span, 0));
		assertThat(this.arena.freeBytes()).isEqualTo(this.arena.segmentBytes());
		List<Allocation> removed = this.arena.removeFreeSegments(Long.MAX_VALUE, Long.MAX_VALUE);
		assertThat(removed).as("each coalesced whole").hasSize(this.allocator.outstanding().size());
		removed.forEach(this.allocator::free);
		assertThat(this.allocator.outstanding()).isEmpty();
	}

	private List<Arena.Span> cut(long... sizes) {
		List<Arena.Span> spans = new ArrayList<>();
		for (long size : sizes) {
			spans.add(this.arena.allocate(size));
		}
		return spans;
	}

	private static void assertNoOverlap(List<Arena.Span> spans) {
		List<Arena.Span> sorted = new ArrayList<>(spans);
		sorted.sort((a, b) -> (a.segment != b.segment) ? Long.compare(a.segment.id, b.segment.id)
				: Long.compare(a.offset, b.offset));
		for (int i = 1; i < sorted.size(); i++) {
			Arena.Span before = sorted.get(i - 1);
			Arena.Span span = sorted.get(i);
			if (before.segment == span.segment) {
				assertThat(before.offset + before.size).as("spans overlap").isLessThanOrEqualTo(span.offset);
			}
		}
	}

}
