package io.gpumem.cuda;

import java.util.concurrent.atomic.AtomicBoolean;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;

/**
 * A block of device or managed memory: {@code unwrap(CUdeviceptr.class)} gives kernels their argument.
 * Slices share the block's memory and are freed with it.
 * <p>
 * Copies from the host and fills are complete when they return: CUDA runs them on the legacy default
 * stream, which gpumem's non-blocking streams do not wait for, and may return before a fill or the DMA of
 * a copy from pageable memory has run; each is followed by a synchronization of that stream, so that work
 * enqueued afterwards on any stream sees it.
 */
final class CudaDeviceAllocation implements Allocation, CudaMemory {

	private final CudaDevice device;

	private final MemoryKind kind;

	private final Object pointer;

	private final long size;

	private final AtomicBoolean freed;

	private final boolean slice;

	private final MemoryAllocator allocator;

	CudaDeviceAllocation(MemoryAllocator allocator, CudaDevice device, MemoryKind kind, Object pointer, long size) {
		this(allocator, device, kind, pointer, size, new AtomicBoolean(), false);
	}

	private CudaDeviceAllocation(MemoryAllocator allocator, CudaDevice device, MemoryKind kind, Object pointer,
			long size, AtomicBoolean freed, boolean slice) {
		this.allocator = allocator;
		this.device = device;
		this.kind = kind;
		this.pointer = pointer;
		this.size = size;
		this.freed = freed;
		this.slice = slice;
	}

	/** The allocator that made the block, the only one that may free it. */
	MemoryAllocator allocator() {
		return this.allocator;
	}

	@Override
	public long size() {
		return this.size;
	}

	@Override
	public MemoryKind kind() {
		return this.kind;
	}

	@Override
	public CudaDevice device() {
		return this.device;
	}

	@Override
	public Object pointer() {
		return this.pointer;
	}

	@Override
	public <T> T unwrap(Class<T> type) {
		checkNotFreed();
		if (type.isInstance(this.pointer)) {
			return type.cast(this.pointer);
		}
		if (type.isInstance(this)) {
			return type.cast(this);
		}
		throw new IllegalArgumentException(
				"a CUDA " + this.kind + " allocation unwraps to jcuda.driver.CUdeviceptr, not " + type.getName());
	}

	@Override
	public void copyFromHost(long byteOffset, Object array, int arrayIndex, int count, ElementType type) {
		checkNotFreed();
		CudaDriver driver = this.device.bind();
		driver.copyArrayToDevice(driver.offset(this.pointer, byteOffset), array, (long) arrayIndex * type.bytes(),
				(long) count * type.bytes());
		driver.synchronizeStream(null);
	}

	@Override
	public void copyToHost(long byteOffset, Object array, int arrayIndex, int count, ElementType type) {
		checkNotFreed();
		CudaDriver driver = this.device.bind();
		driver.copyDeviceToArray(array, (long) arrayIndex * type.bytes(), driver.offset(this.pointer, byteOffset),
				(long) count * type.bytes());
	}

	/** {@inheritDoc} Into pinned memory, in one {@code cuMemcpyDtoH}. */
	@Override
	public void copyTo(long byteOffset, Allocation target, long targetOffset, long bytes) {
		if (!(target instanceof CudaPinnedAllocation pinned)) {
			Allocation.super.copyTo(byteOffset, target, targetOffset, bytes);
			return;
		}
		checkNotFreed();
		pinned.copyFromDevice(targetOffset, this.pointer, byteOffset, bytes);
	}

	@Override
	public void fill(long byteOffset, long byteCount, byte value) {
		checkNotFreed();
		CudaDriver driver = this.device.bind();
		driver.memsetD8(driver.offset(this.pointer, byteOffset), value, byteCount, null);
		driver.synchronizeStream(null);
	}

	@Override
	public void fillInts(long byteOffset, long count, int value) {
		checkNotFreed();
		CudaDriver driver = this.device.bind();
		driver.memsetD32(driver.offset(this.pointer, byteOffset), value, count, null);
		driver.synchronizeStream(null);
	}

	@Override
	public Allocation slice(long byteOffset, long bytes) {
		checkNotFreed();
		return new CudaDeviceAllocation(this.allocator, this.device, this.kind,
				this.device.bind().offset(this.pointer, byteOffset), bytes, this.freed, true);
	}

	/** The block's pointer, for a copy made now. */
	Object usablePointer() {
		checkNotFreed();
		return this.pointer;
	}

	/** Marks the block freed and answers its pointer for the driver to free. */
	Object markFreed() {
		if (this.slice) {
			throw new IllegalArgumentException("a slice is freed with the block it was cut from: " + this);
		}
		if (!this.freed.compareAndSet(false, true)) {
			throw new IllegalStateException("CUDA " + this.kind + " allocation of " + this.size + " bytes freed twice");
		}
		return this.pointer;
	}

	private void checkNotFreed() {
		if (this.freed.get()) {
			throw new IllegalStateException("CUDA " + this.kind + " allocation of " + this.size + " bytes used after free");
		}
	}

	@Override
	public String toString() {
		return "CudaDeviceAllocation[" + this.kind + ", " + this.size + " bytes" + (this.freed.get() ? ", freed" : "")
				+ "]";
	}

}
