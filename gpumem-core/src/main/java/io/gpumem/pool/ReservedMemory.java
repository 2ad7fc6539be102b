package io.gpumem.pool;

import java.util.concurrent.atomic.AtomicLong;

import io.gpumem.allocator.AllocatorDecorator;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryAllocator;

/**
 * A pool's allocator, counting the bytes the pool holds of it: the one count of the pool's reserved bytes, which its
 * tiers, statistics and history read.
 */
final class ReservedMemory extends AllocatorDecorator {

	private final AtomicLong bytes = new AtomicLong();

	ReservedMemory(MemoryAllocator allocator) {
		super(allocator);
	}

	@Override
	public Allocation allocate(long bytes) {
		Allocation allocation = super.allocate(bytes);
		this.bytes.addAndGet(allocation.size());
		return allocation;
	}

	@Override
	public void free(Allocation allocation) {
		super.free(allocation);
		this.bytes.addAndGet(-allocation.size());
	}

	/** Bytes allocated and not yet freed. */
	long bytes() {
		return this.bytes.get();
	}

}
