package io.gpumem.allocator;

/**
 * A snapshot of what went through a {@link StatisticsAllocator}.
 *
 * @param currentBytes bytes allocated and not yet freed
 * @param peakBytes the highest {@code currentBytes} seen
 * @param totalBytes bytes allocated since creation
 * @param currentCount allocations not yet freed
 * @param peakCount the highest {@code currentCount} seen
 * @param totalCount allocations since creation
 * @param failedCount allocations refused by the upstream allocator
 */
public record AllocatorStatistics(long currentBytes, long peakBytes, long totalBytes, long currentCount,
		long peakCount, long totalCount, long failedCount) {
}
