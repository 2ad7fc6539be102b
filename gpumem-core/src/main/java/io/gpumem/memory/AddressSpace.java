package io.gpumem.memory;

/**
 * Device addresses reserved with no memory behind them, into which physical memory is mapped a granule at a time
 * (CUDA's virtual memory management): what lets a pool's arena grow at its end without segment boundaries and give
 * back any free granule, wherever it lies. The allocator that offers it ({@link MemoryAllocator#addressSpace()})
 * allocates the physical memory, whole granules, which is used only through a mapping.
 */
public interface AddressSpace {

	/** The unit of mapping: sizes and offsets in a range are whole multiples of it. */
	long granularity();

	/** The most bytes one range may hold. */
	long maxRangeBytes();

	/**
	 * Reserves a range of addresses, holding no memory.
	 * @param bytes a positive multiple of the granularity, at most {@link #maxRangeBytes()}
	 * @throws IllegalArgumentException if {@code bytes} breaks those rules
	 * @throws GpuOutOfMemoryException if the device has no range of addresses that large left
	 */
	AddressRange reserve(long bytes);

	/**
	 * The host memory a sleep copies the bytes of lent granules into, the backend's pinned memory, which the device
	 * copies to and from fastest; null where there is none, for the Java heap.
	 */
	default MemoryAllocator offloadMemory() {
		return null;
	}

	/**
	 * Waits until the work the device was given so far has completed, so that memory a kernel or a copy may still use
	 * can be unmapped: before a sleep unmaps the memory behind lent buffers. Nothing to wait for where work runs as it
	 * is enqueued (the host backend).
	 */
	default void awaitDeviceWork() {
	}

	/**
	 * The check every {@link #reserve} starts with.
	 * @throws IllegalArgumentException if {@code bytes} is not a positive multiple of the granularity, at most
	 * {@link #maxRangeBytes()}
	 */
	default void requireRange(long bytes) {
		requireGranules("a range", bytes);
		if (bytes > maxRangeBytes()) {
			throw new IllegalArgumentException("a range holds at most " + maxRangeBytes() + " bytes, not " + bytes);
		}
	}

	/**
	 * The check of sizes of physical memory and ranges: {@code what} of {@code bytes} must be whole granules.
	 * @throws IllegalArgumentException if {@code bytes} is not a positive multiple of the granularity
	 */
	default void requireGranules(String what, long bytes) {
		MemoryAllocator.requirePositiveSize(bytes);
		if (bytes % granularity() != 0) {
			throw new IllegalArgumentException(what + " of " + bytes + " bytes is not a whole number of granules of "
					+ granularity() + " bytes");
		}
	}

}
