package io.gpumem.host;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Deque;
import java.util.concurrent.atomic.AtomicReferenceArray;

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
 * The host backend's emulation of CUDA's virtual memory management: physical DEVICE memory in whole granules,
 * drawn on the device's capacity, and address ranges it is mapped into, with CUDA's rules checked. A range's
 * addresses are a private mapping of a sparse temporary file, which costs the process nothing until written: a
 * mapped granule counts against the capacity, a reserved one does not. An unmapped granule's pages stay with the
 * process, and are used again when a granule is mapped there, filled first with bytes no one wrote (0xCD), as new
 * physical memory on CUDA holds none of what was mapped there before; a released range's mapping serves the next
 * range of its size, and goes back only when the collector unmaps it.
 */
final class HostVirtualMemory implements MemoryAllocator, AddressSpace {

	/** CUDA's granularity on current devices. */
	static final long GRANULARITY = 2L << 20;

	/** The most one mapping of a file may hold, in whole granules. */
	static final long MAX_RANGE_BYTES = 1L << 30;

	/** The most released mappings kept for ranges reserved later. */
	static final int SPARE_RANGES = 2;

	private final HostBackend.Capacity capacity;

	/**
	 * Mappings of released ranges, used again by the next reservations of their size: the pages a range wrote stay
	 * with the process until the collector unmaps its buffer, so reusing them bounds what the process keeps.
	 */
	private final Deque<MappedByteBuffer> spare = new ArrayDeque<>();

	private final DeviceHealth health;

	/** What a granule mapped where memory was mapped before reads: 64 KiB of bytes no one wrote. */
	private static final byte[] UNWRITTEN = filled(64 << 10, (byte) 0xCD);

	/** The backend's pinned memory, which a sleep offloads into. */
	private final MemoryAllocator pinned;

	HostVirtualMemory(HostBackend.Capacity capacity, DeviceHealth health, MemoryAllocator pinned) {
		this.capacity = capacity;
		this.health = health;
		this.pinned = pinned;
	}

	@Override
	public MemoryAllocator offloadMemory() {
		return this.pinned;
	}

	@Override
	public MemoryKind kind() {
		return MemoryKind.DEVICE;
	}

	/** Physical memory of whole granules, as {@code cuMemCreate}: used only once mapped into a range. */
	@Override
	public Allocation allocate(long bytes) {
		requireGranules("physical memory", bytes);
		this.health.check();
		this.capacity.reserve(MemoryKind.DEVICE, bytes);
		return new Physical(this, bytes);
	}

	/** Releases physical memory; where it is still mapped, its bytes stay charged until it is unmapped, as on CUDA. */
	@Override
	public void free(Allocation allocation) {
		physical(allocation).release();
	}

	@Override
	public AddressSpace addressSpace() {
		return this;
	}

	@Override
	public long granularity() {
		return GRANULARITY;
	}

	@Override
	public long maxRangeBytes() {
		return MAX_RANGE_BYTES;
	}

	@Override
	public AddressRange reserve(long bytes) {
		requireRange(bytes);
		this.health.check();
		MappedByteBuffer reused = reuse(bytes);
		return new Range(this, (reused != null) ? reused : addresses(bytes), reused != null);
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
		return "host DEVICE virtual memory (capacity " + ByteSizes.format(memoryInfo().totalBytes()) + ", granules of "
				+ ByteSizes.format(GRANULARITY) + ")";
	}

	private Physical physical(Allocation allocation) {
		if (allocation instanceof Physical physical && physical.space == this) {
			return physical;
		}
		throw new IllegalArgumentException("not physical memory of this host address space: " + allocation);
	}

	private synchronized MappedByteBuffer reuse(long bytes) {
		for (var it = this.spare.iterator(); it.hasNext();) {
			MappedByteBuffer mapping = it.next();
			if (mapping.capacity() == bytes) {
				it.remove();
				return mapping;
			}
		}
		return null;
	}

	private synchronized void keep(MappedByteBuffer mapping) {
		if (this.spare.size() == SPARE_RANGES) {
			this.spare.removeFirst();
		}
		this.spare.addLast(mapping);
	}

	/**
	 * Addresses that hold no memory until written: a private mapping of a sparse file, deleted at once, or at exit
	 * where the file system keeps a mapped file (Windows).
	 */
	private static MappedByteBuffer addresses(long bytes) {
		try {
			Path file = Files.createTempFile("gpumem-range", ".bin");
			try (RandomAccessFile sparse = new RandomAccessFile(file.toFile(), "rw")) {
				sparse.setLength(bytes);
				return sparse.getChannel().map(FileChannel.MapMode.PRIVATE, 0, bytes);
			}
			finally {
				if (!file.toFile().delete()) {
					file.toFile().deleteOnExit();
				}
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException("could not reserve " + bytes + " bytes of host addresses", ex);
		}
	}

	private static byte[] filled(int bytes, byte value) {
		byte[] filled = new byte[bytes];
		Arrays.fill(filled, value);
		return filled;
	}

	/** Physical memory of a host address space: charged until released and unmapped. */
	private static final class Physical extends PhysicalMemory {

		private final HostVirtualMemory space;

		private int mappings;

		private boolean released;

		Physical(HostVirtualMemory space, long size) {
			super(size);
			this.space = space;
		}

		synchronized void mapped() {
			if (this.released) {
				throw new IllegalStateException(this + " mapped after its release");
			}
			this.mappings++;
		}

		synchronized void unmapped() {
			this.mappings--;
			chargeOff();
		}

		synchronized void release() {
			if (this.released) {
				throw new IllegalStateException(this + " released twice");
			}
			this.released = true;
			chargeOff();
		}

		private void chargeOff() {
			if (this.released && this.mappings == 0) {
				this.space.capacity.release(size());
			}
		}

		@Override
		public String toString() {
			return "host physical memory[" + size() + " bytes" + (this.released ? ", released" : "") + "]";
		}

	}

	/** A range of host addresses, with the physical memory mapped at each granule. */
	static final class Range implements AddressRange {

		private final HostVirtualMemory space;

		private final MappedByteBuffer addresses;

		private final AtomicReferenceArray<Physical> granules;

		/** The granules whose pages held memory mapped before: a mapping there is filled with bytes no one wrote. */
		private final BitSet written;

		private boolean released;

		Range(HostVirtualMemory space, MappedByteBuffer addresses, boolean reused) {
			this.space = space;
			this.addresses = addresses;
			this.granules = new AtomicReferenceArray<>((int) (addresses.capacity() / GRANULARITY));
			this.written = new BitSet(this.granules.length());
			if (reused) {
				this.written.set(0, this.granules.length());
			}
		}

		@Override
		public long size() {
			return this.addresses.capacity();
		}

		@Override
		public synchronized void map(long offset, Allocation physical) {
			Physical memory = this.space.physical(physical);
			int first = granule(offset, memory.size());
			int count = (int) (memory.size() / GRANULARITY);
			for (int i = first; i < first + count; i++) {
				if (this.granules.get(i) != null) {
					throw new IllegalArgumentException(
							"granule at " + i * GRANULARITY + " of " + this + " is already mapped");
				}
			}
			memory.mapped();
			for (int i = first; i < first + count; i++) {
				if (this.written.get(i)) {
					ByteBuffer pages = this.addresses.slice(Math.toIntExact(i * GRANULARITY), (int) GRANULARITY);
					while (pages.hasRemaining()) {
						pages.put(UNWRITTEN, 0, Math.min(UNWRITTEN.length, pages.remaining()));
					}
				}
				this.written.set(i);
				this.granules.set(i, memory);
			}
		}

		@Override
		public synchronized void unmap(long offset, Allocation physical) {
			Physical memory = this.space.physical(physical);
			int first = granule(offset, memory.size());
			int count = (int) (memory.size() / GRANULARITY);
			boolean whole = (first == 0 || this.granules.get(first - 1) != memory)
					&& (first + count == this.granules.length() || this.granules.get(first + count) != memory);
			for (int i = first; i < first + count; i++) {
				whole &= this.granules.get(i) == memory;
			}
			if (!whole) {
				throw new IllegalArgumentException(memory + " is not mapped whole at " + offset + " of " + this);
			}
			for (int i = first; i < first + count; i++) {
				this.granules.set(i, null);
			}
			memory.unmapped();
		}

		/** {@inheritDoc} Of any bytes, as CUDA's pointer arithmetic; a use of bytes not mapped is refused. */
		@Override
		public Allocation slice(long offset, long bytes) {
			checkWithin(offset, bytes);
			ByteBuffer view = this.addresses.slice(Math.toIntExact(offset), Math.toIntExact(bytes));
			return new HostAllocation(MemoryKind.DEVICE, view.order(ByteOrder.nativeOrder()), this.space.health, this,
					offset);
		}

		@Override
		public synchronized void release() {
			for (int i = 0; i < this.granules.length(); i++) {
				if (this.granules.get(i) != null) {
					throw new IllegalStateException(this + " is released with its granule at " + i * GRANULARITY
							+ " still mapped");
				}
			}
			if (!this.released) {
				this.released = true;
				this.space.keep(this.addresses);
			}
		}

		/**
		 * Refuses a use of bytes that are not all mapped, as a device faults on them.
		 * @throws IllegalStateException if a granule of {@code [offset, offset + bytes)} is unmapped
		 */
		void checkMapped(long offset, long bytes) {
			if (bytes == 0) {
				return;
			}
			checkWithin(offset, bytes);
			for (long i = offset / GRANULARITY; i <= (offset + bytes - 1) / GRANULARITY; i++) {
				if (this.granules.get((int) i) == null) {
					throw new IllegalStateException("bytes at " + offset + " of " + this
							+ " are used unmapped (granule at " + i * GRANULARITY + ")"
							+ (this.released ? "; the range was released" : ""));
				}
			}
		}

		private void checkWithin(long offset, long bytes) {
			if (offset < 0 || bytes < 0 || offset + bytes > size()) {
				throw new IllegalArgumentException(bytes + " bytes at " + offset + " are outside " + this);
			}
		}

		private int granule(long offset, long bytes) {
			if (offset % GRANULARITY != 0 || offset < 0 || offset + bytes > size()) {
				throw new IllegalArgumentException("a mapping of " + bytes + " bytes at " + offset
						+ " is not whole granules within " + this);
			}
			return (int) (offset / GRANULARITY);
		}

		@Override
		public String toString() {
			return "host range of " + ByteSizes.format(size());
		}

	}

}
