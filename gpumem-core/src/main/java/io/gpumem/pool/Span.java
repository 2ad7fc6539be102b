package io.gpumem.pool;

import java.util.Comparator;

import io.gpumem.memory.Allocation;

/**
 * A run of bytes of one of the {@link Arena}'s segments, lent or free; its neighbours are the spans just
 * before and after it in the segment. Guarded by the arena's lock.
 */
final class Span {

	/** The order spans are fit in: smallest first; among spans of one size, the lowest address (oldest segment, then offset). */
	static final Comparator<Span> BEST_FIT = (a, b) -> {
		int bySize = Long.compare(a.size, b.size);
		if (bySize != 0) {
			return bySize;
		}
		int bySegment = Long.compare(a.segment.id, b.segment.id);
		return (bySegment != 0) ? bySegment : Long.compare(a.offset, b.offset);
	};

	final Segment segment;

	final long offset;

	long size;

	Span prev;

	Span next;

	boolean free;

	/** The block last made of this span, which keeps it and its leak watcher reachable while lent. */
	Block block;

	Span(Segment segment, long offset, long size) {
		this.segment = segment;
		this.offset = offset;
		this.size = size;
		if (offset == 0) {
			segment.first = this;
		}
	}

	/** Makes {@code next} the span after this one. */
	void link(Span next) {
		this.next = next;
		if (next != null) {
			next.prev = this;
		}
	}

	/** Whether this span is its whole segment, free. */
	boolean wholeFreeSegment() {
		return this.free && this.offset == 0 && this.next == null;
	}

	/** The span as a block of a class, made anew only when the span was cut or merged since it was last lent. */
	Block block(int classIndex) {
		Block block = this.block;
		if (block == null || block.size != this.size || block.classIndex != classIndex) {
			block = Block.of(this.segment.allocation.slice(this.offset, this.size), classIndex, this);
			this.block = block;
		}
		return block;
	}

	/** An allocation from the allocator, cut into spans. */
	static final class Segment {

		final Allocation allocation;

		/** Segments in the order allocated: the arena's tie-break between spans of one size. */
		final long id;

		Span first;

		/** When its last lent span was freed, on the pool's clock. */
		long freeSince;

		Segment(Allocation allocation, long id) {
			this.allocation = allocation;
			this.id = id;
		}

	}

}
