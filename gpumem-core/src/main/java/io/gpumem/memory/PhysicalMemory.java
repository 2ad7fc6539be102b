package io.gpumem.memory;

/**
 * Physical memory of an {@link AddressSpace}'s allocator: whole granules that hold bytes only where they are mapped
 * into a range, through whose slices they are used; every use of the allocation itself is refused.
 */
public abstract class PhysicalMemory implements Allocation {

	private final long size;

	protected PhysicalMemory(long size) {
		this.size = size;
	}

	@Override
	public final long size() {
		return this.size;
	}

	@Override
	public final MemoryKind kind() {
		return MemoryKind.DEVICE;
	}

	@Override
	public final <T> T unwrap(Class<T> type) {
		throw unmapped();
	}

	@Override
	public final void copyFromHost(long byteOffset, Object array, int arrayIndex, int count, ElementType type) {
		throw unmapped();
	}

	@Override
	public final void copyToHost(long byteOffset, Object array, int arrayIndex, int count, ElementType type) {
		throw unmapped();
	}

	@Override
	public final void fill(long byteOffset, long byteCount, byte value) {
		throw unmapped();
	}

	@Override
	public final void fillInts(long byteOffset, long count, int value) {
		throw unmapped();
	}

	@Override
	public final Allocation slice(long byteOffset, long bytes) {
		throw unmapped();
	}

	private IllegalStateException unmapped() {
		return new IllegalStateException("physical memory is used through a range it is mapped into: " + this);
	}

}
