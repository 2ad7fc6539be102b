package io.gpumem.allocator;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryAllocator;

/**
 * Remembers every allocation outstanding through it, optionally with the stack that made it, so
 * that what was never freed can be listed.
 */
public final class TrackingAllocator extends AllocatorDecorator {

	private final boolean captureStackTraces;

	private final Map<Allocation, TrackedAllocation> outstanding = new ConcurrentHashMap<>();

	public TrackingAllocator(MemoryAllocator upstream, boolean captureStackTraces) {
		super(upstream);
		this.captureStackTraces = captureStackTraces;
	}

	@Override
	public Allocation allocate(long bytes) {
		Allocation allocation = super.allocate(bytes);
		List<StackTraceElement> site = this.captureStackTraces
				? List.copyOf(Arrays.asList(new Throwable().getStackTrace())) : List.of();
		this.outstanding.put(allocation,
				new TrackedAllocation(allocation, bytes, Thread.currentThread().getName(), site));
		return allocation;
	}

	@Override
	public void free(Allocation allocation) {
		if (this.outstanding.remove(allocation) == null) {
			throw new IllegalStateException("freeing an allocation this allocator does not hold: " + allocation);
		}
		super.free(allocation);
	}

	/** The allocations not yet freed, in no particular order. */
	public List<TrackedAllocation> outstanding() {
		return List.copyOf(this.outstanding.values());
	}

	/** Bytes of the allocations not yet freed. */
	public long outstandingBytes() {
		return this.outstanding.values().stream().mapToLong(TrackedAllocation::bytes).sum();
	}

}
