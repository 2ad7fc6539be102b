package io.gpumem.cuda;

import io.gpumem.backend.VirtualMemory;
import io.gpumem.memory.AddressRange;
import io.gpumem.memory.AddressSpace;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.DeviceHealth;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.memory.MemoryKind;
import io.gpumem.memory.PhysicalMemory;

/**
 * A CUDA device's virtual memory management: physical memory from {@code cuMemCreate}, whole granules, mapped
 * with {@code cuMemMap} into ranges from {@code cuMemAddressReserve}, and readable and writable by the device once
 * {@code cuMemSetAccess} lets it.
 */
final class CudaVirtualMemory implements MemoryAllocator, AddressSpace {

	private final CudaDevice device;

	private final long granularity;

	private final long maxRangeBytes;

	/** The device's pinned memory, which a sleep offloads into. */
	private final MemoryAllocator pinned;

	private CudaVirtualMemory(CudaDevice device, long granularity, long maxRangeBytes, MemoryAllocator pinned) {
		this.device = device;
		this.granularity = granularity;
		this.maxRangeBytes = maxRangeBytes;
		this.pinned = pinned;
	}

	/**
	 * The device's virtual memory where it reports support and one granule maps, takes a write and unmaps; why
	 * not otherwise.
	 */
	static VirtualMemory open(CudaDevice device, MemoryAllocator pinned) {
		CudaDriver driver = device.bind();
		if (!driver.virtualMemorySupported(device.ordinal())) {
			return VirtualMemory.unsupported("CUDA device " + device.ordinal() + " does not report virtual memory"
					+ " management (CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)");
		}
		try {
			long granularity = driver.allocationGranularity(device.ordinal());
			long total = driver.memoryInfo().totalBytes();
			CudaVirtualMemory space = new CudaVirtualMemory(device, granularity,
					(total + granularity - 1) / granularity * granularity, pinned);
			space.probe();
			return VirtualMemory.of(space);
		}
		catch (RuntimeException ex) {
			return VirtualMemory.unsupported("probing virtual memory on CUDA device " + device.ordinal()
					+ " failed: " + ex.getMessage());
		}
	}

	/** Maps one granule into a range of its own, writes it, and gives both back. */
	private void probe() {
		AddressRange range = reserve(this.granularity);
		try {
			Allocation physical = allocate(this.granularity);
			try {
				range.map(0, physical);
				try {
					range.slice(0, this.granularity).fill(0, this.granularity, (byte) 0);
				}
				finally {
					range.unmap(0, physical);
				}
			}
			finally {
				free(physical);
			}
		}
		finally {
			range.release();
		}
	}

	@Override
	public MemoryKind kind() {
		return MemoryKind.DEVICE;
	}

	@Override
	public Allocation allocate(long bytes) {
		requireGranules("physical memory", bytes);
		try {
			Physical physical = new Physical(this, this.device.bind().createPhysical(this.device.ordinal(), bytes), bytes);
			this.device.allocated();
			return physical;
		}
		catch (CudaException ex) {
			throw CudaAllocator.refusal(ex, this, bytes);
		}
	}

	@Override
	public void free(Allocation allocation) {
		this.device.free((driver) -> driver.releasePhysical(physical(allocation).handle));
	}

	@Override
	public AddressSpace addressSpace() {
		return this;
	}

	@Override
	public long granularity() {
		return this.granularity;
	}

	@Override
	public long maxRangeBytes() {
		return this.maxRangeBytes;
	}

	@Override
	public AddressRange reserve(long bytes) {
		requireRange(bytes);
		try {
			Range range = new Range(this, this.device.bind().reserveAddresses(bytes), bytes);
			this.device.allocated();
			return range;
		}
		catch (CudaException ex) {
			throw CudaAllocator.refusal(ex, this, bytes);
		}
	}

	@Override
	public MemoryAllocator offloadMemory() {
		return this.pinned;
	}

	/** {@code cuCtxSynchronize}: every stream of the device's context, the default ones too. */
	@Override
	public void awaitDeviceWork() {
		this.device.bind().synchronizeContext();
	}

	@Override
	public DeviceHealth health() {
		return this.device.health();
	}

	@Override
	public MemoryInfo memoryInfo() {
		return this.device.bind().memoryInfo();
	}

	@Override
	public String describe() {
		return "cuda DEVICE virtual memory on device " + this.device.ordinal() + " (" + this.device.name()
				+ ", granules of " + ByteSizes.format(this.granularity) + ")";
	}

	private Physical physical(Allocation allocation) {
		if (allocation instanceof Physical physical && physical.space == this) {
			return physical;
		}
		throw new IllegalArgumentException("not physical memory of CUDA device " + this.device.ordinal() + ": "
				+ allocation);
	}

	/** A {@code cuMemCreate} handle. */
	private static final class Physical extends PhysicalMemory {

		private final CudaVirtualMemory space;

		private final Object handle;

		Physical(CudaVirtualMemory space, Object handle, long size) {
			super(size);
			this.space = space;
			this.handle = handle;
		}

		@Override
		public String toString() {
			return "CUDA physical memory[" + size() + " bytes]";
		}

	}

	/** A range of reserved device addresses; its slices share the range's freed flag, so none outlives it. */
	private static final class Range implements AddressRange {

		private final CudaVirtualMemory space;

		private final CudaDeviceAllocation addresses;

		Range(CudaVirtualMemory space, Object base, long bytes) {
			this.space = space;
			this.addresses = new CudaDeviceAllocation(space, space.device, MemoryKind.DEVICE, base, bytes);
		}

		@Override
		public long size() {
			return this.addresses.size();
		}

		@Override
		public void map(long offset, Allocation physical) {
			Physical memory = this.space.physical(physical);
			CudaDriver driver = this.space.device.bind();
			Object address = driver.offset(this.addresses.pointer(), offset);
			driver.map(address, memory.size(), memory.handle);
			try {
				driver.setAccess(address, memory.size(), this.space.device.ordinal());
			}
			catch (RuntimeException ex) {
				driver.unmap(address, memory.size());
				throw ex;
			}
		}

		@Override
		public void unmap(long offset, Allocation physical) {
			Physical memory = this.space.physical(physical);
			CudaDriver driver = this.space.device.bindRetained();
			driver.unmap(driver.offset(this.addresses.pointer(), offset), memory.size());
		}

		@Override
		public Allocation slice(long offset, long bytes) {
			return this.addresses.slice(offset, bytes);
		}

		@Override
		public void release() {
			Object addresses = this.addresses.markFreed();
			this.space.device.free((driver) -> driver.freeAddresses(addresses, size()));
		}

		@Override
		public String toString() {
			return "CUDA range of " + ByteSizes.format(size()) + " on device " + this.space.device.ordinal();
		}

	}

}
