package io.gpumem.allocator;

import java.util.Objects;

import io.gpumem.memory.AddressSpace;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.DeviceHealth;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.memory.MemoryKind;

/** Base of the allocators that add one concern to another allocator and forward the rest to it. */
public abstract class AllocatorDecorator implements MemoryAllocator {

	private final MemoryAllocator upstream;

	protected AllocatorDecorator(MemoryAllocator upstream) {
		this.upstream = Objects.requireNonNull(upstream, "upstream allocator");
	}

	/** The allocator this one decorates. */
	public MemoryAllocator upstream() {
		return this.upstream;
	}

	@Override
	public MemoryKind kind() {
		return this.upstream.kind();
	}

	@Override
	public Allocation allocate(long bytes) {
		return this.upstream.allocate(bytes);
	}

	@Override
	public void free(Allocation allocation) {
		this.upstream.free(allocation);
	}

	@Override
	public boolean streamOrdered() {
		return this.upstream.streamOrdered();
	}

	@Override
	public AddressSpace addressSpace() {
		return this.upstream.addressSpace();
	}

	@Override
	public DeviceHealth health() {
		return this.upstream.health();
	}

	@Override
	public MemoryInfo memoryInfo() {
		return this.upstream.memoryInfo();
	}

	@Override
	public long limitBytes() {
		return this.upstream.limitBytes();
	}

	@Override
	public String limitOrigin() {
		return this.upstream.limitOrigin();
	}

	@Override
	public String describe() {
		return this.upstream.describe();
	}

	/** The first allocator of the given type in a chain of decorators, starting with {@code allocator}. */
	public static <T extends MemoryAllocator> T find(MemoryAllocator allocator, Class<T> type) {
		MemoryAllocator current = allocator;
		while (current != null) {
			if (type.isInstance(current)) {
				return type.cast(current);
			}
			current = (current instanceof AllocatorDecorator decorator) ? decorator.upstream() : null;
		}
		return null;
	}

}
