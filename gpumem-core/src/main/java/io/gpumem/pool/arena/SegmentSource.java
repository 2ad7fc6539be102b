package io.gpumem.pool.arena;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntPredicate;

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
 * mapped as spans are lent, the blocks the free lists keep in ranges apart from the others: those mapped a granule at
 * a time, these in steps of the mapping step.
 */
final class SegmentSource {

	final MemoryAllocator allocator;

	/** Where ranges are reserved; null for segments that are allocations. */
	final AddressSpace space;

	/** The segment step: the segment size, or the granule. */
	final long step;

	/** The step the ranges of the blocks the free lists do not keep are mapped in, a multiple of the granule. */
	private final long othersStep;

	/** The free spans of the classes whose blocks the free lists keep. */
	final FreeSpans kept = new FreeSpans();

	/**
	 * The free spans of every other block, lent and given back: in ranges apart from the kept ones, so that the free
	 * lists' stacks pin no granule among them (PyTorch's small and large pools, split by lifetime); the same spans
	 * over allocations.
	 */
	final FreeSpans others;

	private final AtomicLong nextId = new AtomicLong();

	/** Whether the free lists keep the blocks of a class (or {@link Block#ABOVE_TOP_CLASS}). */
	private final IntPredicate keeps;

	SegmentSource(MemoryAllocator allocator, long segmentStep, long mappingStep, IntPredicate keeps) {
		this.keeps = keeps;
		this.allocator = allocator;
		this.space = allocator.addressSpace();
		this.step = (this.space != null) ? this.space.granularity() : segmentStep;
		this.othersStep = (this.space != null) ? Arena.mappingStep(mappingStep, this.step) : this.step;
		this.others = (this.space != null) ? new FreeSpans() : this.kept;
	}

	/** The free spans a block of the class (or {@link Block#ABOVE_TOP_CLASS}) is cut from. */
	FreeSpans spans(int classIndex) {
		return this.keeps.test(classIndex) ? this.kept : this.others;
	}

	/** The size of a segment made for a span of {@code spanSize} bytes. */
	long segmentSize(long spanSize) {
		long steps = (spanSize + this.step - 1) / this.step * this.step;
		if (this.space != null) {
			long range = Math.min(this.space.maxRangeBytes(), this.allocator.memoryInfo().totalBytes());
			return Math.max(steps, range / this.step * this.step);
		}
		return sharesStep(spanSize) ? this.step : steps;
	}

	/** Whether a span of {@code spanSize} bytes shares its segment step, a segment or a granule, with others. */
	boolean sharesStep(long spanSize) {
		return spanSize <= this.step / 2;
	}

	/**
	 * A new segment for a span of {@code spanSize} bytes, joining {@code spans} ({@link #spans}): a range reserved,
	 * or an allocation, only of the span's size when the allocator refuses a whole segment.
	 * @throws GpuOutOfMemoryException if the allocator refuses even that, or the span is larger than a range
	 */
	Span.Segment make(long spanSize, FreeSpans spans) {
		if (this.space != null) {
			if (spanSize > this.space.maxRangeBytes()) {
				throw new GpuOutOfMemoryException(OutOfMemoryDiagnostic.of(MemoryKind.DEVICE, spanSize,
						this.allocator.memoryInfo(), -1, "larger than the largest range of addresses, "
								+ ByteSizes.format(this.space.maxRangeBytes())));
			}
			Granules granules = new Granules(this.space.reserve(segmentSize(spanSize)), this.step,
					(spans == this.others) ? this.othersStep : this.step);
			return segment(null, granules, granules.range.size(), spans);
		}
		long segmentSize = segmentSize(spanSize);
		if (segmentSize > spanSize) {
			try {
				return allocation(segmentSize, spans);
			}
			catch (GpuOutOfMemoryException ex) {
				// a device too full for a whole segment may still hold the request
			}
		}
		return allocation(spanSize, spans);
	}

	private Span.Segment allocation(long bytes, FreeSpans spans) {
		Allocation allocation = this.allocator.allocate(bytes);
		return segment(allocation, null, allocation.size(), spans);
	}

	private Span.Segment segment(Allocation allocation, Granules granules, long size, FreeSpans spans) {
		return new Span.Segment(allocation, granules, size, spans, this.nextId.getAndIncrement());
	}

}
