package io.gpumem.pool;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;

/**
 * The tier behind a pool's size classes: segments allocated from the allocator in large steps and cut into
 * spans, best fit, a span split when it is larger than asked and coalesced with its free neighbours when
 * freed, so that memory freed by one size serves any other (PyTorch's caching allocator, RMM's coalescing
 * pool). A segment goes back to the allocator only whole, when the pool trims or its byte cap is passed.
 * <p>
 * One lock guards the spans; the allocator is called outside it, so a slow {@code cuMemAlloc} holds up no
 * request that finds a fit. Those that find none wait for the segment being allocated and look again, so
 * that threads short of memory at once do not each allocate one.
 */
final class Arena implements Tier {

	/** Spans start at multiples of this and their sizes are multiples of it: the alignment {@code cuMemAlloc} gives. */
	static final long ALIGNMENT = 256;

	private final MemoryAllocator allocator;

	private final PoolCounters counters;

	/** Held while a segment is allocated: requests that find no fit meanwhile look again before they grow too. */
	private final Object growing = new Object();

	private final long segmentStep;

	private final TreeSet<Span> free = new TreeSet<>(Span.BEST_FIT);

	/** Every segment held, in the order allocated. */
	private final Set<Span.Segment> segments = new LinkedHashSet<>();

	private final Span probe = new Span(new Span.Segment(null, Long.MIN_VALUE), 0, 0);

	private long nextSegmentId;

	private boolean closed;

	private volatile long segmentBytes;

	private volatile long freeBytes;

	/** An arena whose segments are {@code segmentStep} bytes, or multiples of it for spans above half of it. */
	Arena(MemoryAllocator allocator, long segmentStep, PoolCounters counters) {
		this.allocator = allocator;
		this.segmentStep = segmentStep;
		this.counters = counters;
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

	/** A block of at least {@code size} bytes for the class, cut from a free span, the best fit; null when none fits. */
	@Override
	public Block take(int classIndex, long size, int home) {
		Span span = takeSpan(spanSize(size));
		return (span != null) ? book(classIndex, span) : null;
	}

	/**
	 * A block of at least {@code size} bytes for the class: cut from a free span as {@link #take} finds it, else
	 * from a new segment.
	 * @throws GpuOutOfMemoryException if the allocator refuses a segment, even one of the span's size
	 */
	Block allocate(int classIndex, long size) {
		long spanSize = spanSize(size);
		Span span = takeSpan(spanSize);
		if (span == null) {
			synchronized (this.growing) {
				span = takeSpan(spanSize);
				if (span == null) {
					Allocation allocation = allocateSegment(spanSize);
					synchronized (this) {
						span = lend(new Span(addSegment(allocation), 0, allocation.size()), spanSize);
					}
				}
			}
		}
		return book(classIndex, span);
	}

	/**
	 * Allocates new segments with room for {@code count} spans of {@code size} bytes, all free: a warm-up.
	 * @throws GpuOutOfMemoryException if the allocator refuses one (those allocated before stay)
	 */
	void grow(long size, int count) {
		long spanSize = spanSize(size);
		long perSegment = segmentSize(spanSize) / spanSize;
		for (long left = count; left > 0; left -= perSegment) {
			Allocation allocation = allocateSegment(Math.min(left, perSegment) * spanSize);
			synchronized (this) {
				Span whole = new Span(addSegment(allocation), 0, allocation.size());
				whole.free = true;
				this.free.add(whole);
				this.freeBytes += whole.size;
			}
		}
	}

	/** Frees the block's span at {@code stamp}, coalesced; once closed, gives back each segment as it falls free. */
	@Override
	public boolean giveBack(Block block, int home, long stamp, boolean cache) {
		this.counters.reserved(block.classIndex, -1, block.size);
		boolean closed;
		synchronized (this) {
			free(block.span, stamp);
			closed = this.closed;
		}
		if (closed) {
			release(Long.MAX_VALUE, Long.MAX_VALUE);
		}
		return true;
	}

	/** Takes back the blocks a tier above lets go of, free since {@code cutoff}, then releases as {@link #release}. */
	long takeBack(List<Block> blocks, long bytes, long cutoff) {
		blocks.forEach((block) -> giveBack(block, -1, cutoff, false));
		return release(bytes, cutoff);
	}

	/** Gives whole free segments back to the allocator, the longest held first. */
	@Override
	public long release(long bytes, long cutoff) {
		long released = 0;
		for (Allocation segment : removeFreeSegments(bytes, cutoff)) {
			this.allocator.free(segment);
			released += segment.size();
		}
		this.counters.countTrimmed(released);
		return released;
	}

	/** Bytes in free spans. */
	@Override
	public long cachedBytes() {
		return this.freeBytes;
	}

	/** Adds nothing: the free spans belong to no class. */
	@Override
	public void addCached(long[] buffers, long[] bytes) {
	}

	@Override
	public void close() {
		synchronized (this) {
			this.closed = true;
		}
		release(Long.MAX_VALUE, Long.MAX_VALUE);
	}

	/** Bytes of the segments held. */
	long segmentBytes() {
		return this.segmentBytes;
	}

	/** Each segment with its spans in address order, each as {@code view} sees it, under the arena's lock. */
	synchronized List<PoolSnapshot.SegmentView> snapshot(Function<Span, PoolSnapshot.BlockView> view) {
		List<PoolSnapshot.SegmentView> segments = new ArrayList<>(this.segments.size());
		for (Span.Segment segment : this.segments) {
			List<PoolSnapshot.BlockView> spans = new ArrayList<>();
			for (Span span = segment.first; span != null; span = span.next) {
				spans.add(view.apply(span));
			}
			segments.add(new PoolSnapshot.SegmentView(segment.allocation.size(), spans));
		}
		return segments;
	}

	/** The segments, their bytes, the bytes free in them and the largest free span. */
	synchronized PoolStatistics.Segments segments() {
		return new PoolStatistics.Segments(this.segments.size(), this.segmentBytes, this.freeBytes,
				this.free.isEmpty() ? 0 : this.free.last().size);
	}

	private Block book(int classIndex, Span span) {
		this.counters.reserved(classIndex, 1, span.size);
		return span.block(classIndex);
	}

	/** A free span of at least {@code size} bytes, split to size, the best fit; null when none is free. */
	private synchronized Span takeSpan(long size) {
		this.probe.size = size;
		Span fit = this.free.ceiling(this.probe);
		if (fit == null) {
			return null;
		}
		this.free.remove(fit);
		this.freeBytes -= fit.size;
		return lend(fit, size);
	}

	private Span.Segment addSegment(Allocation allocation) {
		Span.Segment segment = new Span.Segment(allocation, this.nextSegmentId++);
		this.segments.add(segment);
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

	/** Frees a lent span, coalescing it with its free neighbours. */
	private void free(Span span, long stamp) {
		if (span.free) {
			throw new IllegalStateException("span of " + span.size + " bytes freed twice");
		}
		this.freeBytes += span.size;
		Span merged = span;
		Span before = span.prev;
		if (before != null && before.free) {
			this.free.remove(before);
			before.size += merged.size;
			before.link(merged.next);
			merged = before;
		}
		Span after = merged.next;
		if (after != null && after.free) {
			this.free.remove(after);
			merged.size += after.size;
			merged.link(after.next);
		}
		merged.free = true;
		this.free.add(merged);
		if (merged.wholeFreeSegment()) {
			merged.segment.freeSince = stamp;
		}
	}

	/**
	 * Takes whole free segments out, the longest held first, until they cover {@code bytes} or none is left;
	 * only those free since {@code cutoff} or before on the pool's clock.
	 */
	private synchronized List<Allocation> removeFreeSegments(long bytes, long cutoff) {
		List<Allocation> removed = new ArrayList<>();
		long covered = 0;
		for (var it = this.segments.iterator(); it.hasNext() && covered < bytes;) {
			Span.Segment segment = it.next();
			Span whole = segment.first;
			if (whole.wholeFreeSegment() && segment.freeSince <= cutoff) {
				it.remove();
				this.free.remove(whole);
				this.freeBytes -= whole.size;
				this.segmentBytes -= whole.size;
				removed.add(segment.allocation);
				covered += whole.size;
			}
		}
		return removed;
	}

	/** Cuts {@code size} bytes from the front of free span {@code span}, leaving the rest free. */
	private Span lend(Span span, long size) {
		long rest = span.size - size;
		if (rest >= ALIGNMENT) {
			Span remainder = new Span(span.segment, span.offset + size, rest);
			remainder.prev = span;
			remainder.link(span.next);
			span.next = remainder;
			span.size = size;
			remainder.free = true;
			this.free.add(remainder);
			this.freeBytes += rest;
		}
		span.free = false;
		return span;
	}

}
