package io.gpumem.allocator;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryAllocator;

/**
 * Counts current, peak and total bytes and allocations passing through to another allocator: a block from when its
 * allocation returned until its free begins, so that the current figures are never above what the other holds.
 */
public final class StatisticsAllocator extends AllocatorDecorator {

	private final AtomicLong currentBytes = new AtomicLong();

	private final AtomicLong peakBytes = new AtomicLong();

	private final AtomicLong currentCount = new AtomicLong();

	private final AtomicLong peakCount = new AtomicLong();

	private final LongAdder totalBytes = new LongAdder();

	private final LongAdder totalCount = new LongAdder();

	private final LongAdder failedCount = new LongAdder();

	public StatisticsAllocator(MemoryAllocator upstream) {
		super(upstream);
	}

	@Override
	public Allocation allocate(long bytes) {
		Allocation allocation;
		try {
			allocation = super.allocate(bytes);
		}
		catch (RuntimeException ex) {
			this.failedCount.increment();
			throw ex;
		}
		this.totalBytes.add(bytes);
		this.totalCount.increment();
		this.peakBytes.accumulateAndGet(this.currentBytes.addAndGet(bytes), Math::max);
		this.peakCount.accumulateAndGet(this.currentCount.incrementAndGet(), Math::max);
		return allocation;
	}

	@Override
	public void free(Allocation allocation) {
		this.currentBytes.addAndGet(-allocation.size());
		this.currentCount.decrementAndGet();
		try {
			super.free(allocation);
		}
		catch (RuntimeException | Error ex) {
			this.currentBytes.addAndGet(allocation.size());
			this.currentCount.incrementAndGet();
			throw ex;
		}
	}

	/** Bytes allocated through this allocator and not yet freed: a plain read, for callers on a hot path. */
	public long currentBytes() {
		return this.currentBytes.get();
	}

	/** What has gone through so far. */
	public AllocatorStatistics statistics() {
		return new AllocatorStatistics(this.currentBytes.get(), this.peakBytes.get(), this.totalBytes.sum(),
				this.currentCount.get(), this.peakCount.get(), this.totalCount.sum(), this.failedCount.sum());
	}

}
