package io.gpumem.host;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.memory.MemoryKind;
import io.gpumem.memory.OutOfMemoryDiagnostic;

/** Allocates one kind of memory of a {@link HostBackend} as direct byte buffers. */
final class HostAllocator implements MemoryAllocator {

	private final MemoryKind kind;

	private final HostBackend.Capacity capacity;

	HostAllocator(MemoryKind kind, HostBackend.Capacity capacity) {
		this.kind = kind;
		this.capacity = capacity;
	}

	@Override
	public MemoryKind kind() {
		return this.kind;
	}

	@Override
	public Allocation allocate(long bytes) {
		MemoryAllocator.requirePositiveSize(bytes);
		if (bytes > HostBackend.MAX_BLOCK_BYTES) {
			throw new IllegalArgumentException("allocation size " + bytes + " exceeds the host backend's largest block of "
					+ HostBackend.MAX_BLOCK_BYTES + " bytes");
		}
		if (!this.capacity.tryReserve(bytes)) {
			throw new GpuOutOfMemoryException(
					OutOfMemoryDiagnostic.of(this.kind, bytes, memoryInfo(), -1, "host backend capacity exhausted"));
		}
		try {
			ByteBuffer buffer = ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder());
			return new HostAllocation(this.kind, buffer);
		}
		catch (OutOfMemoryError ex) {
			this.capacity.release(bytes);
			throw new GpuOutOfMemoryException(OutOfMemoryDiagnostic.of(this.kind, bytes, memoryInfo(), -1,
					"JVM direct memory exhausted: raise -XX:MaxDirectMemorySize above the host capacity"), ex);
		}
	}

	@Override
	public void free(Allocation allocation) {
		if (!(allocation instanceof HostAllocation host) || host.kind() != this.kind) {
			throw new IllegalArgumentException("not a host " + this.kind + " allocation: " + allocation);
		}
		host.markFreed();
		this.capacity.release(host.size());
	}

	@Override
	public MemoryInfo memoryInfo() {
		return this.capacity.info();
	}

	@Override
	public String describe() {
		return "host " + this.kind + " (capacity " + ByteSizes.format(memoryInfo().totalBytes()) + ")";
	}

}
