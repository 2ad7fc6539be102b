package io.gpumem.pool.arena;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryAllocator;

/**
 * A run of bytes of one of the {@link Arena}'s segments, lent or free; its neighbours are the spans just
 * before and after it in the segment. Guarded by the arena's lock, but for the block of a lent span ({@link #block}),
 * which the thread it is lent to makes, reading the class it is lent for.
 */
public final class Span {

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

	/** When it was last freed, on the pool's clock, where it is free. */
	long freeSince;

	/** The class it is lent for (or {@link Block#ABOVE_TOP_CLASS}), where it is lent. */
	int classIndex;

	/**
	 * The block last made of this span, which keeps it and its leak watcher reachable while lent; made by the thread
	 * it is lent to, once that has let go of the arena's lock.
	 */
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

	/** Whether every granule the span touches is mapped; always over an allocation. */
	boolean mapped() {
		return this.segment.granules == null || this.segment.granules.mapped(this.offset, this.offset + this.size);
	}

	/** Whether this span is its whole segment, free. */
	boolean wholeFreeSegment() {
		return this.free && this.offset == 0 && this.next == null;
	}

	/**
	 * Notes that the span is lent for a class, under the arena's lock: the block last made of it is dropped where it
	 * does not fit (the span was cut or merged since, or the class differs), for {@link #block} to make anew.
	 */
	void lend(int classIndex) {
		this.classIndex = classIndex;
		if (this.block != null && (this.block.size != this.size || this.block.classIndex != classIndex)) {
			this.block = null;
		}
	}

	/** The span as a block of the class it is lent for ({@link #lend}), made where there is none. */
	Block block() {
		if (this.block == null) {
			this.block = Block.of(this.segment.slice(this.offset, this.size), this.classIndex, this);
		}
		return this.block;
	}

	/**
	 * A segment of the arena: an allocation from the allocator, or an expandable segment, a reserved range whose
	 * granules are mapped as its spans are lent.
	 */
	static final class Segment {

		/** The allocation, or null for an expandable segment. */
		final Allocation allocation;

		/** The range and its mapped granules, or null for an allocation. */
		final Granules granules;

		final long size;

		/** The free spans its free spans are among. */
		final FreeSpans spans;

		/** Segments in the order allocated: the arena's tie-break between spans of one size. */
		final long id;

		Span first;

		Segment(Allocation allocation, Granules granules, long size, FreeSpans spans, long id) {
			this.allocation = allocation;
			this.granules = granules;
			this.size = size;
			this.spans = spans;
			this.id = id;
		}

		/** Bytes the segment holds of the device: all of an allocation, the mapped granules of a range. */
		long heldBytes() {
			return (this.granules != null) ? this.granules.mappedBytes() : this.size;
		}

		/**
		 * Takes out the granules of this expandable segment lying wholly in free spans and free since {@code cutoff},
		 * lowest first, until they cover {@code bytes}, for {@code into} to unmap; answers the bytes taken.
		 */
		long takeFree(long bytes, long cutoff, Unmapping into) {
			long taken = 0;
			for (Span span = this.first; span != null && taken < bytes; span = span.next) {
				if (span.free) {
					taken += this.granules.takeFree(span.offset, span.offset + span.size, bytes - taken, cutoff, into);
				}
			}
			return taken;
		}

		/** Gives the segment back whole, taken out of the arena: its allocation, or its range with nothing mapped. */
		long release(MemoryAllocator allocator) {
			if (this.allocation == null) {
				this.granules.range.release();
				return 0;
			}
			allocator.free(this.allocation);
			return this.size;
		}

		Allocation slice(long offset, long bytes) {
			return (this.allocation != null) ? this.allocation.slice(offset, bytes)
					: this.granules.range.slice(offset, bytes);
		}

		/**
		 * The memory the segment holds, as pieces in address order, each with the spans in it clipped to it: the
		 * whole allocation, or each run of mapped granules.
		 */
		List<Piece> pieces() {
			long[] runs = (this.granules != null) ? this.granules.runs() : new long[] { 0, this.size };
			List<Piece> pieces = new ArrayList<>(runs.length / 2);
			Span span = this.first;
			for (int i = 0; i < runs.length; i += 2) {
				long start = runs[i];
				long end = runs[i + 1];
				while (span.offset + span.size <= start) {
					span = span.next;
				}
				List<Part> parts = new ArrayList<>();
				for (Span part = span; part != null && part.offset < end; part = part.next) {
					long from = Math.max(start, part.offset);
					parts.add(new Part(from - start, Math.min(end, part.offset + part.size) - from, !part.free,
							part.free ? null : part.block));
				}
				pieces.add(new Piece(end - start, parts));
			}
			return pieces;
		}

	}

	/** Memory a segment holds, in one run of addresses. */
	public record Piece(long bytes, List<Part> parts) {
	}

	/**
	 * The bytes of a span in a {@link Piece}, from {@code offset} in it, as they were when the piece was read:
	 * whether it was {@code lent}, and its {@code block}, null where it was free or its block was still being made
	 * ({@link Span#block}).
	 */
	public record Part(long offset, long bytes, boolean lent, Block block) {
	}

}
