package io.gpumem.backend;

import java.util.Objects;

import io.gpumem.memory.MemoryAllocator;

/**
 * Whether a backend's DEVICE memory can be mapped into reserved address ranges, which a pool's arena then grows in
 * without segment boundaries: the allocator of that physical memory, whose {@link MemoryAllocator#addressSpace()}
 * reserves the ranges, or why the device cannot.
 *
 * @param allocator the allocator of physical memory; null where unsupported
 * @param reason why not, in one line; null where supported
 */
public record VirtualMemory(MemoryAllocator allocator, String reason) {

	public VirtualMemory {
		if ((allocator == null) == (reason == null)) {
			throw new IllegalArgumentException("virtual memory has an allocator or a reason, one of the two");
		}
	}

	/** Virtual memory served by {@code allocator}. */
	public static VirtualMemory of(MemoryAllocator allocator) {
		if (allocator.addressSpace() == null) {
			throw new IllegalArgumentException(allocator.describe() + " has no address space");
		}
		return new VirtualMemory(allocator, null);
	}

	/** No virtual memory, for {@code reason}. */
	public static VirtualMemory unsupported(String reason) {
		return new VirtualMemory(null, Objects.requireNonNull(reason, "reason"));
	}

	/** The allocator of physical memory where supported, else {@code fixed}, whose blocks are used directly. */
	public MemoryAllocator allocatorOr(MemoryAllocator fixed) {
		return supported() ? this.allocator : fixed;
	}

	/** Whether the device maps memory into reserved ranges. */
	public boolean supported() {
		return this.allocator != null;
	}

}
