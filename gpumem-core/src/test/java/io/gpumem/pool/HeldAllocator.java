package io.gpumem.pool;

import java.util.concurrent.atomic.AtomicLong;

import io.gpumem.allocator.AllocatorDecorator;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryAllocator;

/**
 * An allocator counting the most its upstream could be holding: a block from the start of its allocation until its
 * free has returned; and the most it held since a mark, which bounds what a pool reading at any instant between may
 * report.
 */
public final class HeldAllocator extends AllocatorDecorator {

	private final AtomicLong held = new AtomicLong();

	private final AtomicLong most = new AtomicLong();

	public HeldAllocator(MemoryAllocator upstream) {
		super(upstream);
	}

	@Override
	public Allocation allocate(long bytes) {
		this.most.accumulateAndGet(this.held.addAndGet(bytes), Math::max);
		try {
			return super.allocate(bytes);
		}
		catch (RuntimeException ex) {
			this.held.addAndGet(-bytes);
			throw ex;
		}
	}

	@Override
	public void free(Allocation allocation) {
		super.free(allocation);
		this.held.addAndGet(-allocation.size());
	}

	/** The bytes the upstream could be holding now. */
	public long held() {
		return this.held.get();
	}

	/** Starts a window at what is held now, and answers it. */
	public long mark() {
		long now = this.held.get();
		this.most.set(now);
		return now;
	}

	/** The most held since the mark. */
	public long mostSinceMark() {
		return Math.max(this.most.get(), this.held.get());
	}

}
