package io.gpumem.allocator;

import java.util.List;

import io.gpumem.memory.Allocation;

/**
 * An allocation a {@link TrackingAllocator} has seen handed out and not yet freed.
 *
 * @param allocation the block
 * @param bytes its size
 * @param threadName the thread that allocated it
 * @param allocationSite the stack at allocation, empty unless stack traces are captured
 */
public record TrackedAllocation(Allocation allocation, long bytes, String threadName,
		List<StackTraceElement> allocationSite) {
}
