package io.gpumem.cuda;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.DeviceHealth;
import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.memory.MemoryKind;
import io.gpumem.memory.OutOfMemoryDiagnostic;

/**
 * Allocates one kind of CUDA memory: {@code cuMemAlloc} for DEVICE, {@code cuMemHostAlloc} for PINNED,
 * {@code cuMemAllocManaged} for UNIFIED. The driver's out-of-memory result becomes a
 * {@link GpuOutOfMemoryException} with the device's figures.
 */
final class CudaAllocator implements MemoryAllocator {

	/** The largest pinned block: its view is one {@link java.nio.ByteBuffer}. */
	static final long MAX_PINNED_BYTES = Integer.MAX_VALUE - 8;

	private final CudaDevice device;

	private final MemoryKind kind;

	CudaAllocator(CudaDevice device, MemoryKind kind) {
		this.device = device;
		this.kind = kind;
	}

	@Override
	public MemoryKind kind() {
		return this.kind;
	}

	@Override
	public Allocation allocate(long bytes) {
		MemoryAllocator.requirePositiveSize(bytes);
		if (this.kind == MemoryKind.PINNED && bytes > MAX_PINNED_BYTES) {
			throw new IllegalArgumentException("pinned allocation size " + bytes + " exceeds the largest pinned block of "
					+ MAX_PINNED_BYTES + " bytes");
		}
		CudaDriver driver = this.device.bind();
		Object pointer;
		try {
			pointer = switch (this.kind) {
				case DEVICE -> driver.allocateDevice(bytes);
				case UNIFIED -> driver.allocateManaged(bytes);
				case PINNED -> driver.allocatePinned(bytes);
			};
		}
		catch (CudaException ex) {
			throw refusal(ex, this, bytes);
		}
		this.device.allocated();
		if (this.kind == MemoryKind.PINNED) {
			try {
				return new CudaPinnedAllocation(this.device, pointer, bytes);
			}
			catch (RuntimeException ex) {
				this.device.free((bound) -> bound.freePinned(pointer));
				throw ex;
			}
		}
		return new CudaDeviceAllocation(this, this.device, this.kind, pointer, bytes);
	}

	@Override
	public void free(Allocation allocation) {
		if (allocation instanceof CudaDeviceAllocation block && block.allocator() == this) {
			Object pointer = block.markFreed();
			this.device.free((driver) -> driver.freeDevice(pointer));
		}
		else if (allocation instanceof CudaPinnedAllocation block && block.device() == this.device
				&& this.kind == MemoryKind.PINNED) {
			block.free();
		}
		else {
			throw new IllegalArgumentException("not a CUDA " + this.kind + " allocation of device "
					+ this.device.ordinal() + ": " + allocation);
		}
	}

	@Override
	public DeviceHealth health() {
		return this.device.health();
	}

	/**
	 * The device's free and total memory from {@code cuMemGetInfo}; for PINNED memory, the host's
	 * physical memory, which page-locked blocks come from.
	 */
	@Override
	public MemoryInfo memoryInfo() {
		if (this.kind == MemoryKind.PINNED) {
			OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
			if (os instanceof com.sun.management.OperatingSystemMXBean host) {
				return new MemoryInfo(host.getFreeMemorySize(), host.getTotalMemorySize());
			}
		}
		return this.device.bind().memoryInfo();
	}

	@Override
	public String describe() {
		return "cuda " + this.kind + " on device " + this.device.ordinal() + " (" + this.device.name() + ", "
				+ ByteSizes.format(memoryInfo().totalBytes()) + ")";
	}

	/**
	 * The driver's refusal of an allocation of {@code bytes} as gpumem reports it: out of memory as a
	 * {@link GpuOutOfMemoryException} with the figures of {@code allocator}'s memory, where they can be read;
	 * any other failure as it is.
	 */
	static RuntimeException refusal(CudaException ex, MemoryAllocator allocator, long bytes) {
		if (ex.code() != CudaException.OUT_OF_MEMORY) {
			return ex;
		}
		MemoryInfo info;
		try {
			info = allocator.memoryInfo();
		}
		catch (RuntimeException unknown) {
			info = null;
		}
		return new GpuOutOfMemoryException(OutOfMemoryDiagnostic.of(allocator.kind(), bytes, info, -1, ex.getMessage()),
				ex);
	}

}
