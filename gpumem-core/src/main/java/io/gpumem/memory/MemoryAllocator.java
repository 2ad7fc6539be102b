package io.gpumem.memory;


/**
 * Allocates and frees blocks of one memory kind: the small interface every backend implements and
 * every decorator in {@code io.gpumem.allocator} wraps (RMM's {@code memory_resource}).
 * Implementations are safe for use by many threads.
 */
public interface MemoryAllocator {

	/** The kind of memory this allocator hands out. */
	MemoryKind kind();

	/**
	 * Allocates a block of exactly {@code bytes} bytes.
	 * @throws IllegalArgumentException if {@code bytes} is not positive or exceeds what the backend supports
	 * @throws GpuOutOfMemoryException if the memory is not available
	 */
	Allocation allocate(long bytes);

	/**
	 * Frees a block this allocator (or the one it decorates) handed out.
	 * @throws IllegalStateException if the block was already freed
	 */
	void free(Allocation allocation);

	/**
	 * Whether this allocator hands out blocks in a stream's order, of a pool that does its own carving
	 * (CUDA's stream-ordered allocator): a pool over it takes a block of its own for every buffer rather
	 * than cutting buffers from shared segments, so that a block made ready in one request's stream is
	 * lent to that request only.
	 */
	default boolean streamOrdered() {
		return false;
	}

	/**
	 * Whether the device behind this allocator still works: a pool lends nothing from a failed device.
	 * {@link DeviceHealth#UNWATCHED} for an allocator whose device nothing watches.
	 */
	default DeviceHealth health() {
		return DeviceHealth.UNWATCHED;
	}

	/**
	 * The address space this allocator's memory is mapped into, for an allocator of physical memory: its blocks are
	 * used only through the ranges' slices. Null for an allocator whose blocks are used directly.
	 */
	default AddressSpace addressSpace() {
		return null;
	}

	/** Free and total bytes of the device behind this allocator. */
	MemoryInfo memoryInfo();

	/**
	 * The byte budget this allocator draws on, below the device's capacity, or -1 where none limits it: a pool refuses
	 * at once a request larger than the capacity or the budget, since no memory given back could serve it.
	 */
	default long limitBytes() {
		return -1;
	}

	/** How {@link #limitBytes()} was reckoned, for out-of-memory messages; empty where no budget limits it. */
	default String limitOrigin() {
		return "";
	}

	/** A description for logs and diagnostics, such as "host DEVICE (capacity 4.00 GiB)". */
	default String describe() {
		return getClass().getSimpleName() + " " + kind();
	}

	/**
	 * The check every implementation of {@link #allocate(long)} starts with.
	 * @throws IllegalArgumentException if {@code bytes} is not positive
	 */
	static void requirePositiveSize(long bytes) {
		if (bytes <= 0) {
			throw new IllegalArgumentException("allocation size must be positive: " + bytes);
		}
	}

}
