package io.gpumem.memory;

/**
 * One range of an {@link AddressSpace}: physical memory is mapped into it and unmapped again, whole allocations at
 * offsets that are multiples of the granularity, and the mapped bytes are used through {@linkplain #slice slices}.
 * Callers keep to CUDA's rules, which an implementation checks: an offset holds one mapping at a time, only a
 * whole mapping is unmapped, and the range is released once nothing is mapped.
 */
public interface AddressRange {

	/** The bytes of addresses the range holds. */
	long size();

	/**
	 * Maps {@code physical}, an allocation of the space's allocator, at {@code offset}, readable and writable by the
	 * device.
	 * @throws IllegalArgumentException if the offset is not a multiple of the granularity, the mapping would leave
	 * the range or overlap another, or {@code physical} is not the space's memory
	 */
	void map(long offset, Allocation physical);

	/**
	 * Unmaps the allocation mapped at {@code offset}, which its allocator may free once no range maps it.
	 * @throws IllegalArgumentException if {@code physical} is not mapped at {@code offset}
	 */
	void unmap(long offset, Allocation physical);

	/**
	 * A view of {@code bytes} bytes from {@code offset}, which must be mapped while the view is used: the host
	 * backend refuses a use of bytes not mapped with an {@link IllegalStateException}; a device faults.
	 */
	Allocation slice(long offset, long bytes);

	/**
	 * Gives the addresses back.
	 * @throws IllegalStateException if something is still mapped
	 */
	void release();

}
