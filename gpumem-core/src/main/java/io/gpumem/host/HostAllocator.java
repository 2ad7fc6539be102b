package io.gpumem.host;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.DeviceHealth;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.memory.MemoryKind;
import io.gpumem.memory.OutOfMemoryDiagnostic;

/** Allocates one kind of memory of a {@link HostBackend} as direct byte buffers. */
final class HostAllocator implements MemoryAllocator {

	/** The alignment of every block's address, {@code cuMemAlloc}'s. */
	static final int ALIGNMENT = 256;

	private final MemoryKind kind;

	private final HostBackend.Capacity capacity;

	private final DeviceHealth health;

	HostAllocator(MemoryKind kind, HostBackend.Capacity capacity, DeviceHealth health) {
		this.kind = kind;
		this.capacity = capacity;
		this.health = health;
	}

	@Override
	public MemoryKind kind() {
		return this.kind;
	}

	/**
	 * {@inheritDoc} As {@code cuMemAlloc}: the block starts on a {@value #ALIGNMENT}-byte boundary of its native
	 * address, and a request the capacity cannot hold is out of memory, whatever its size.
	 */
	@Override
	public Allocation allocate(long bytes) {
		MemoryAllocator.requirePositiveSize(bytes);
		this.health.check();
		this.capacity.reserve(this.kind, bytes);
		if (bytes > HostBackend.MAX_BLOCK_BYTES) {
			this.capacity.release(bytes);
			throw new IllegalArgumentException("allocation size " + bytes + " exceeds the host backend's largest block of "
					+ HostBackend.MAX_BLOCK_BYTES + " bytes");
		}
		try {
			ByteBuffer buffer = ByteBuffer.allocateDirect((int) bytes + ALIGNMENT - 1);
			int misalignment = buffer.alignmentOffset(0, ALIGNMENT);
			int start = (misalignment == 0) ? 0 : ALIGNMENT - misalignment;
			return new HostAllocation(this.kind, buffer.slice(start, (int) bytes).order(ByteOrder.nativeOrder()),
					this.health);
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
	public DeviceHealth health() {
		return this.health;
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
