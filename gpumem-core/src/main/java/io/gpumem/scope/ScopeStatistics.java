package io.gpumem.scope;

/**
 * A snapshot of a {@link MemoryScope}.
 *
 * @param name the scope's name
 * @param currentBytes bytes of the buffers open in the scope
 * @param peakBytes the highest {@code currentBytes} seen
 * @param allocations buffers allocated in the scope, typed or not
 * @param typedAllocations buffers allocated by element type and count
 * @param openBuffers buffers not yet closed
 */
public record ScopeStatistics(String name, long currentBytes, long peakBytes, long allocations, long typedAllocations,
		long openBuffers) {
}
