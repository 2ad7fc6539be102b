package io.gpumem.pool;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryAllocator;

/**
 * The memory behind a pool's size classes: segments allocated from the allocator in large steps and cut
 * into spans, best fit, a span split when it is larger than asked and coalesced with its free neighbours
 * when freed, so that memory freed by one size serves any other (PyTorch's caching allocator, RMM's
 * coalescing pool). A segment goes back to the allocator only whole, and only when a trim asks.
 * <p>
 * One lock guards it; the allocator is called outside it, so a slow {@code cuMemAlloc} holds up no
 * other request.
 */
final class Arena {

	/** Spans start at multiples of this and their sizes are multiples of it: the alignment {@code cuMemAlloc} gives. */
	static final long ALIGNMENT = 256;

	/** Smaller requests share segments of {@link #SMALL_SEGMENT} bytes. */
	static final long SMALL_REQUEST = 1L << 20;

	static final long SMALL_SEGMENT = 2L << 20;

	/** Larger requests get segments rounded up to multiples of this. */
	static final long LARGE_SEGMENT_STEP = 2L << 20;

	private static final Comparator<Span> BEST_FIT = Comparator.comparingLong((Span span) -> span.size)
		.thenComparingLong((span) -> span.segment.id)
		.thenComparingLong((span) -> span.offset);

	private final MemoryAllocator allocator;

	/** Held while a segment is allocated: requests that find no fit meanwhile look again before they grow too. */
	private final Object growing = new Object();

	static final boolean SPLIT = Boolean.getBoolean("arena.split");

	/** Free spans of the segments for small requests, and of the others. */
	private final TreeSet<Span> smallFree = new TreeSet<>(BEST_FIT);

	private final TreeSet<Span> largeFree = new TreeSet<>(BEST_FIT);

	/** Every segment held, in the order allocated. */
	private final Set<Segment> segments = new LinkedHashSet<>();

	private final Span probe = new Span(new Segment(null, Long.MIN_VALUE, true), 0, 0);

	private long nextSegmentId;

	private volatile long segmentCount;

	private volatile long segmentBytes;

	private volatile long freeBytes;

	Arena(MemoryAllocator allocator) {
		this.allocator = allocator;
	}

	/** The bytes a request of {@code bytes} takes in a segment. */
	static long spanSize(long bytes) {
		return (bytes + ALIGNMENT - 1) & -ALIGNMENT;
	}

	/** The size of a segment allocated for a span of {@code spanSize} bytes. */
	static long segmentSize(long spanSize) {
		return (spanSize <= SMALL_REQUEST) ? SMALL_SEGMENT
				: (spanSize + LARGE_SEGMENT_STEP - 1) / LARGE_SEGMENT_STEP * LARGE_SEGMENT_STEP;
	}

	/** A free span of at least {@code bytes}, split to size, the best fit; null when none is free. */
	synchronized Span take(long bytes) {
		long size = spanSize(bytes);
		this.probe.size = size;
		TreeSet<Span> free = freeSet(size <= SMALL_REQUEST);
		Span fit = free.ceiling(this.probe);
		if (fit == null) {
			return null;
		}
		free.remove(fit);
		this.freeBytes -= fit.size;
		return lend(fit, size);
	}

	/**
	 * A span of at least {@code bytes}: a free one as {@link #take} finds it, else one cut from a new
	 * segment.
	 * @throws io.gpumem.memory.GpuOutOfMemoryException if the allocator refuses the segment
	 */
	Span allocate(long bytes) {
		Span span = take(bytes);
		if (span != null) {
			return span;
		}
		synchronized (this.growing) {
			span = take(bytes);
			if (span != null) {
				return span;
			}
			long size = spanSize(bytes);
			Allocation allocation = this.allocator.allocate(segmentSize(size));
			synchronized (this) {
				Segment segment = new Segment(allocation, this.nextSegmentId++, size <= SMALL_REQUEST);
				this.segments.add(segment);
				this.segmentCount++;
				this.segmentBytes += allocation.size();
				span = lend(new Span(segment, 0, allocation.size()), size);
				span.grew = true;
				return span;
			}
		}
	}

	/** Frees a span lent by this arena at {@code stamp} on the pool's clock, coalescing it with its free neighbours. */
	synchronized void free(Span span, long stamp) {
		if (span.free) {
			throw new IllegalStateException("span of " + span.size + " bytes freed twice");
		}
		this.freeBytes += span.size;
		TreeSet<Span> free = freeSet(span.segment.small);
		Span merged = span;
		Span before = span.prev;
		if (before != null && before.free) {
			free.remove(before);
			before.size += merged.size;
			before.next = merged.next;
			if (merged.next != null) {
				merged.next.prev = before;
			}
			merged = before;
		}
		Span after = merged.next;
		if (after != null && after.free) {
			free.remove(after);
			merged.size += after.size;
			merged.next = after.next;
			if (after.next != null) {
				after.next.prev = merged;
			}
		}
		merged.free = true;
		free.add(merged);
		if (merged.offset == 0 && merged.next == null) {
			merged.segment.freeSince = stamp;
		}
	}

	/**
	 * Takes whole free segments out, the longest held first, until they cover {@code bytes} or none is
	 * left; only those free since {@code cutoff} or before on the pool's clock.
	 * @return their allocations, for the caller to free
	 */
	synchronized List<Allocation> removeFreeSegments(long bytes, long cutoff) {
		List<Allocation> removed = new ArrayList<>();
		long covered = 0;
		for (var it = this.segments.iterator(); it.hasNext() && covered < bytes;) {
			Segment segment = it.next();
			Span whole = segment.first;
			if (whole.free && whole.next == null && segment.freeSince <= cutoff) {
				it.remove();
				freeSet(segment.small).remove(whole);
				this.freeBytes -= whole.size;
				this.segmentCount--;
				this.segmentBytes -= whole.size;
				removed.add(segment.allocation);
				covered += whole.size;
			}
		}
		return removed;
	}

	/** Takes every segment out, lent spans or not, for a pool that is closing; answers their allocations. */
	synchronized List<Allocation> removeAll() {
		List<Allocation> removed = new ArrayList<>();
		this.segments.forEach((segment) -> removed.add(segment.allocation));
		this.segments.clear();
		this.smallFree.clear();
		this.largeFree.clear();
		this.segmentCount = 0;
		this.segmentBytes = 0;
		this.freeBytes = 0;
		return removed;
	}

	/** Segments held. */
	long segments() {
		return this.segmentCount;
	}

	/** Bytes of the segments held. */
	long segmentBytes() {
		return this.segmentBytes;
	}

	/** Bytes in free spans. */
	long freeBytes() {
		return this.freeBytes;
	}

	/** The largest free span; 0 when none is free. */
	synchronized long largestFree() {
		return Math.max(this.smallFree.isEmpty() ? 0 : this.smallFree.last().size,
				this.largeFree.isEmpty() ? 0 : this.largeFree.last().size);
	}

	private TreeSet<Span> freeSet(boolean small) {
		return (small || !SPLIT) ? this.smallFree : this.largeFree;
	}

	/** Cuts {@code size} bytes from the front of free span {@code span}, leaving the rest free. */
	private Span lend(Span span, long size) {
		long rest = span.size - size;
		if (rest >= ALIGNMENT) {
			Span remainder = new Span(span.segment, span.offset + size, rest);
			remainder.prev = span;
			remainder.next = span.next;
			if (span.next != null) {
				span.next.prev = remainder;
			}
			span.next = remainder;
			span.size = size;
			remainder.free = true;
			freeSet(span.segment.small).add(remainder);
			this.freeBytes += rest;
		}
		span.free = false;
		span.grew = false;
		return span;
	}

	/** An allocation from the allocator, cut into spans. */
	static final class Segment {

		final Allocation allocation;

		final long id;

		Span first;

		/** When its last lent span was freed, on the pool's clock. */
		long freeSince;

		/** Whether the segment serves small requests only. */
		final boolean small;

		Segment(Allocation allocation, long id, boolean small) {
			this.allocation = allocation;
			this.id = id;
			this.small = small;
		}

	}

	/** A run of bytes of a segment, lent or free; its neighbours are the spans just before and after it. */
	static final class Span {

		final Segment segment;

		final long offset;

		long size;

		Span prev;

		Span next;

		boolean free;

		/** Whether the segment was allocated for this span as it was lent. */
		boolean grew;

		Span(Segment segment, long offset, long size) {
			this.segment = segment;
			this.offset = offset;
			this.size = size;
			if (offset == 0) {
				segment.first = this;
			}
		}

		/** A view of the first {@code bytes} bytes of this span. */
		Allocation slice(long bytes) {
			return this.segment.allocation.slice(this.offset, bytes);
		}

	}

}
