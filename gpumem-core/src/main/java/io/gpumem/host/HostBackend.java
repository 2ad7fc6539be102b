package io.gpumem.host;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import io.gpumem.allocator.AllocatorDecorator;
import io.gpumem.backend.GpuBackend;
import io.gpumem.backend.VirtualMemory;
import io.gpumem.config.InvalidSettingException;
import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.DeviceHealth;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.memory.MemoryKind;
import io.gpumem.memory.OutOfMemoryDiagnostic;
import io.gpumem.stream.GpuStream;

/**
 * An emulated device in off-heap memory: the embedded backend used when no CUDA device is present.
 * <p>
 * DEVICE and UNIFIED allocations share the device's capacity and PINNED allocations draw on a capacity
 * of their own. Both are enforced exactly, so running out behaves as on a card: the allocation that
 * would exceed the capacity fails with a {@link io.gpumem.memory.GpuOutOfMemoryException}.
 * <p>
 * Memory is held in direct {@link java.nio.ByteBuffer}s. A freed block is given back to the emulated
 * device at once; its native memory returns to the operating system when the garbage collector
 * reclaims the buffer. That choice means no access, even a racing one after a free, ever touches
 * unmapped memory, and every copy is bounds-checked by the JDK.
 */
public final class HostBackend implements GpuBackend {

	/** The largest single block: one direct buffer, aligned within a slightly larger one, is indexed by an int. */
	public static final long MAX_BLOCK_BYTES = Integer.MAX_VALUE - 8 - HostAllocator.ALIGNMENT;

	private final int ordinal;

	private final Map<MemoryKind, HostAllocator> allocators = new EnumMap<>(MemoryKind.class);

	private final MemoryAllocator streamOrdered;

	private final VirtualMemory virtualMemory;

	private final DeviceHealth health;

	/** An emulated device of the given capacity, with as many bytes again of pinned host memory. */
	public HostBackend(long capacityBytes) {
		this(capacityBytes, capacityBytes);
	}

	/** An emulated device of the given capacity and a pinned-memory capacity of its own. */
	public HostBackend(long capacityBytes, long pinnedCapacityBytes) {
		this(0, capacityBytes, pinnedCapacityBytes);
	}

	/**
	 * Emulated device {@code ordinal}, one of several a process may emulate, each with capacities of its
	 * own.
	 */
	public HostBackend(int ordinal, long capacityBytes, long pinnedCapacityBytes) {
		if (ordinal < 0) {
			throw new InvalidSettingException("device", ordinal, "must be 0 or more");
		}
		this.ordinal = ordinal;
		requirePositive("capacity", capacityBytes);
		requirePositive("pinned-capacity", pinnedCapacityBytes);
		this.health = new DeviceHealth(ordinal, deviceName());
		Capacity device = new Capacity(capacityBytes);
		this.allocators.put(MemoryKind.DEVICE, new HostAllocator(MemoryKind.DEVICE, device, this.health));
		this.allocators.put(MemoryKind.UNIFIED, new HostAllocator(MemoryKind.UNIFIED, device, this.health));
		this.allocators.put(MemoryKind.PINNED,
				new HostAllocator(MemoryKind.PINNED, new Capacity(pinnedCapacityBytes), this.health));
		this.virtualMemory = VirtualMemory
			.of(new HostVirtualMemory(device, this.health, this.allocators.get(MemoryKind.PINNED)));
		this.streamOrdered = new AllocatorDecorator(this.allocators.get(MemoryKind.DEVICE)) {

			@Override
			public boolean streamOrdered() {
				return true;
			}

		};
	}

	@Override
	public String name() {
		return "host";
	}

	@Override
	public int deviceId() {
		return this.ordinal;
	}

	@Override
	public String deviceName() {
		return "host memory emulating a device";
	}

	@Override
	public MemoryAllocator allocator(MemoryKind kind) {
		return this.allocators.get(kind);
	}

	/**
	 * The emulated device's DEVICE allocator as a stream-ordered one: the host's streams run their work at
	 * once, so every block is ready in every stream's order; a pool over it takes a block per buffer, as
	 * over CUDA's pool.
	 */
	@Override
	public MemoryAllocator streamOrderedAllocator() {
		return this.streamOrdered;
	}

	/** Emulated: physical memory drawn on the device's capacity, mapped into ranges of host addresses. */
	@Override
	public VirtualMemory virtualMemory() {
		return this.virtualMemory;
	}

	/**
	 * The emulated device's health: it fails only where a fault is injected ({@link DeviceHealth#injectFault}),
	 * and then as a CUDA device does: its pools lend nothing, its streams and buffers refuse work.
	 */
	@Override
	public DeviceHealth health() {
		return this.health;
	}

	/** Free and total bytes of the emulated device (DEVICE and UNIFIED memory together). */
	@Override
	public MemoryInfo memoryInfo() {
		return this.allocators.get(MemoryKind.DEVICE).memoryInfo();
	}

	/** Another emulated device's memory is host memory too: copies go directly. */
	@Override
	public boolean peerAccess(GpuBackend peer) {
		return peer instanceof HostBackend && peer != this;
	}

	/** A stream that runs each copy and fill at once, on the calling thread. */
	@Override
	public GpuStream createStream() {
		this.health.check();
		return new HostStream(this.health);
	}

	@Override
	public String describe() {
		String device = (this.ordinal != 0) ? ", device " + this.ordinal : "";
		return "host backend" + device + " (capacity " + ByteSizes.format(memoryInfo().totalBytes()) + ")";
	}

	/** Nothing to release: host memory returns to the operating system as its buffers are collected. */
	@Override
	public void close() {
	}

	@Override
	public String toString() {
		return describe();
	}

	private static void requirePositive(String setting, long bytes) {
		if (bytes <= 0) {
			throw new InvalidSettingException(setting, bytes, "must be positive");
		}
	}

	/** Bytes of one emulated memory, reserved and released exactly. */
	static final class Capacity {

		private final long totalBytes;

		private final AtomicLong usedBytes = new AtomicLong();

		Capacity(long totalBytes) {
			this.totalBytes = totalBytes;
		}

		/**
		 * Reserves {@code bytes} of memory of a kind.
		 * @throws GpuOutOfMemoryException if the capacity cannot hold them
		 */
		void reserve(MemoryKind kind, long bytes) {
			long used;
			do {
				used = this.usedBytes.get();
				if (bytes > this.totalBytes - used) {
					throw new GpuOutOfMemoryException(
							OutOfMemoryDiagnostic.of(kind, bytes, info(), -1, "host backend capacity exhausted"));
				}
			}
			while (!this.usedBytes.compareAndSet(used, used + bytes));
		}

		void release(long bytes) {
			this.usedBytes.addAndGet(-bytes);
		}

		MemoryInfo info() {
			return new MemoryInfo(this.totalBytes - this.usedBytes.get(), this.totalBytes);
		}

	}

}
