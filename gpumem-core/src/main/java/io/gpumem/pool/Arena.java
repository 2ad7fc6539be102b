package io.gpumem.pool;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;

/**
 * The memory behind a pool's size classes: segments allocated from the allocator in large steps and cut
 * into spans, best fit, a span split when it is larger than asked and coalesced with its free neighbours
 * when freed, so that memory freed by one size serves any other (PyTorch's caching allocator, RMM's
 * coalescing pool). A segment goes back to the allocator only whole, when the pool trims or its byte
 * cap is passed.
 * <p>
 * One lock guards the spans; the allocator is called outside it, so a slow {@code cuMemAlloc} holds up
 * no request that finds a fit. Those that find none wait for the segment being allocated and look
 * again, so that threads short of memory at once do not each allocate one.
 */
final class Arena {

	/** Spans start at multiples of this and their sizes are multiples of it: the alignment {@code cuMemAlloc} gives. */
	static final long ALIGNMENT = 256;

	/** Smallest first; among spans of one size, the lowest address (oldest segment, then offset) first. */
	private static final Comparator<Span> BEST_FIT = (a, b) -> {
		int bySize = Long.compare(a.size, b.size);
		if (bySize != 0) {
			return bySize;
		}
		int bySegment = Long.compare(a.segment.id, b.segment.id);
		return (bySegment != 0) ? bySegment : Long.compare(a.offset, b.offset);
	};

	private final MemoryAllocator allocator;

	/** Held while a segment is allocated: requests that find no fit meanwhile look again before they grow too. */
	private final Object growing = new Object();

	private final long segmentStep;

	private final TreeSet<Span> free = new TreeSet<>(BEST_FIT);

	/** Every segment held, in the order allocated. */
	private final Set<Segment> segments = new LinkedHashSet<>();

	private final Span probe = new Span(new Segment(null, Long.MIN_VALUE), 0, 0);

	private long nextSegmentId;

	private volatile long segmentCount;

	private volatile long segmentBytes;

	private volatile long freeBytes;

	/** An arena whose segments are {@code segmentStep} bytes, or multiples of it for spans above half of it. */
	Arena(MemoryAllocator allocator, long segmentStep) {
		this.allocator = allocator;
		this.segmentStep = segmentStep;
	}

	/** The bytes a request of {@code bytes} takes in a segment. */
	static long spanSize(long bytes) {
		return (bytes + ALIGNMENT - 1) & -ALIGNMENT;
	}

	/** The size of a segment allocated for a span of {@code spanSize} bytes. */
	long segmentSize(long spanSize) {
		return (spanSize <= this.segmentStep / 2) ? this.segmentStep
				: (spanSize + this.segmentStep - 1) / this.segmentStep * this.segmentStep;
	}

	/** A free span of at least {@code bytes}, split to size, the best fit; null when none is free. */
	synchronized Span take(long bytes) {
		long size = spanSize(bytes);
		this.probe.size = size;
		Span fit = this.free.ceiling(this.probe);
		if (fit == null) {
			return null;
		}
		this.free.remove(fit);
		this.freeBytes -= fit.size;
		return lend(fit, size);
	}

	/**
	 * A span of at least {@code bytes}: a free one as {@link #take} finds it, else one cut from a new
	 * segment.
	 * @throws GpuOutOfMemoryException if the allocator refuses a segment, even one of the span's size
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
			Allocation allocation = allocateSegment(size);
			synchronized (this) {
				span = lend(new Span(addSegment(allocation), 0, allocation.size()), size);
				span.grew = true;
				return span;
			}
		}
	}

	/**
	 * Allocates new segments with room for {@code count} spans of {@code bytes}, all free: a warm-up.
	 * @throws GpuOutOfMemoryException if the allocator refuses one (those allocated before stay)
	 */
	void grow(long bytes, int count) {
		long size = spanSize(bytes);
		long perSegment = segmentSize(size) / size;
		for (long left = count; left > 0; left -= perSegment) {
			Allocation allocation = allocateSegment(Math.min(left, perSegment) * size);
			synchronized (this) {
				Span whole = new Span(addSegment(allocation), 0, allocation.size());
				whole.free = true;
				this.free.add(whole);
				this.freeBytes += whole.size;
			}
		}
	}

	private Segment addSegment(Allocation allocation) {
		Segment segment = new Segment(allocation, this.nextSegmentId++);
		this.segments.add(segment);
		this.segmentCount++;
		this.segmentBytes += allocation.size();
		return segment;
	}

	/** A segment for a span of {@code size} bytes; only that span's size when the allocator refuses a whole segment. */
	private Allocation allocateSegment(long size) {
		long segmentSize = segmentSize(size);
		if (segmentSize > size) {
			try {
				return this.allocator.allocate(segmentSize);
			}
			catch (GpuOutOfMemoryException ex) {
				// a device too full for a whole segment may still hold the request
			}
		}
		return this.allocator.allocate(size);
	}

	/** Frees a span lent by this arena at {@code stamp} on the pool's clock, coalescing it with its free neighbours. */
	synchronized void free(Span span, long stamp) {
		if (span.free) {
			throw new IllegalStateException("span of " + span.size + " bytes freed twice");
		}
		this.freeBytes += span.size;
		Span merged = span;
		Span before = span.prev;
		if (before != null && before.free) {
			this.free.remove(before);
			before.size += merged.size;
			before.next = merged.next;
			if (merged.next != null) {
				merged.next.prev = before;
			}
			merged = before;
		}
		Span after = merged.next;
		if (after != null && after.free) {
			this.free.remove(after);
			merged.size += after.size;
			merged.next = after.next;
			if (after.next != null) {
				after.next.prev = merged;
			}
		}
		merged.free = true;
		this.free.add(merged);
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
				this.free.remove(whole);
				this.freeBytes -= whole.size;
				this.segmentCount--;
				this.segmentBytes -= whole.size;
				removed.add(segment.allocation);
				covered += whole.size;
			}
		}
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
		return this.free.isEmpty() ? 0 : this.free.last().size;
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
			this.free.add(remainder);
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

		Segment(Allocation allocation, long id) {
			this.allocation = allocation;
			this.id = id;
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

		/** A view of the first {@code bytes} bytes of this span. */
		Allocation slice(long bytes) {
			return this.segment.allocation.slice(this.offset, bytes);
		}

	}

}
