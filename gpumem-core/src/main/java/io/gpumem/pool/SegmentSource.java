package io.gpumem.pool;

import java.util.concurrent.atomic.AtomicLong;

import io.gpumem.memory.AddressSpace;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;
import io.gpumem.memory.OutOfMemoryDiagnostic;

/**
 * Where an {@link Arena}'s segments come from, and which free spans each joins: allocations in steps of the
 * segment size, or, over an allocator with an {@link AddressSpace}, ranges as large as the allocator's memory,
 * mapped a granule at a time, the front's spans in ranges apart from the others.
 */
final class SegmentSource {

	final MemoryAllocator allocator;

	/** Where ranges are reserved; null for segments that are allocations. */
	final AddressSpace space;

	/** The segment step: the segment size, or the granule. */
	final long step;

	/** The free spans of the front's classes ({@link CachePolicy#FRONT_LIMIT}), whose blocks the free lists keep. */
	final FreeSpans small = new FreeSpans();

	/**
	 * The free spans of larger requests, lent and given back: in ranges apart from the front's, so that a block the
	 * free lists keep pins no granule among them (PyTorch's small and large pools, split by lifetime); the same spans
	 * over allocations.
	 */
	final FreeSpans large;

	private final AtomicLong nextId = new AtomicLong();

	/** The arena the segments are made for. */
	private final Arena arena;

	SegmentSource(MemoryAllocator allocator, long segmentStep, Arena arena) {
		this.arena = arena;
		this.allocator = allocator;
		this.space = allocator.addressSpace();
		this.step = (this.space != null) ? this.space.granularity() : segmentStep;
		this.large = (this.space != null) ? new FreeSpans() : this.small;
	}

	/** The free spans a span of {@code size} bytes is cut from. */
	FreeSpans spans(long size) {
		return (size <= CachePolicy.FRONT_LIMIT) ? this.small : this.large;
	}

	/** Bytes of the free spans, mapped or not. */
	long freeBytes() {
		return this.small.bytes() + ((this.large != this.small) ? this.large.bytes() : 0);
	}

	/** The size of a segment made for a span of {@code spanSize} bytes. */
	long segmentSize(long spanSize) {
		long steps = (spanSize + this.step - 1) / this.step * this.step;
		if (this.space != null) {
			long range = Math.min(this.space.maxRangeBytes(), this.allocator.memoryInfo().totalBytes());
			return Math.max(steps, range / this.step * this.step);
		}
		return (spanSize <= this.step / 2) ? this.step : steps;
	}

	/**
	 * A new segment for a span of {@code spanSize} bytes: a range reserved, or an allocation, only of the span's
	 * size when the allocator refuses a whole segment.
	 * @throws GpuOutOfMemoryException if the allocator refuses even that, or the span is larger than a range
	 */
	Span.Segment make(long spanSize) {
		if (this.space != null) {
			if (spanSize > this.space.maxRangeBytes()) {
				throw new GpuOutOfMemoryException(OutOfMemoryDiagnostic.of(MemoryKind.DEVICE, spanSize,
						this.allocator.memoryInfo(), -1, "larger than the largest range of addresses, "
								+ ByteSizes.format(this.space.maxRangeBytes())));
			}
			Granules granules = new Granules(this.space.reserve(segmentSize(spanSize)), this.step);
			return segment(null, granules, granules.range.size(), spanSize);
		}
		long segmentSize = segmentSize(spanSize);
		if (segmentSize > spanSize) {
			try {
				return allocation(segmentSize, spanSize);
			}
			catch (GpuOutOfMemoryException ex) {
				// a device too full for a whole segment may still hold the request
			}
		}
		return allocation(spanSize, spanSize);
	}

	private Span.Segment allocation(long bytes, long spanSize) {
		Allocation allocation = this.allocator.allocate(bytes);
		return segment(allocation, null, allocation.size(), spanSize);
	}

	private Span.Segment segment(Allocation allocation, Granules granules, long size, long spanSize) {
		return new Span.Segment(this.arena, allocation, granules, size, spans(spanSize), this.nextId.getAndIncrement());
	}

}
