package io.gpumem.allocator;

import java.util.concurrent.atomic.AtomicBoolean;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;

/**
 * Carves small blocks out of large ones (slabs), so that warming a thousand small buffers costs a few
 * driver calls instead of a thousand.
 * <p>
 * Requests up to {@code maxCarvedBytes} are cut from the current slab at offsets aligned to
 * {@link #ALIGNMENT} bytes; larger ones go to the upstream allocator as they are. A slab is freed when
 * the last block cut from it is freed; a block lives as long as it is allocated, so a slab with one block
 * still allocated stays reserved upstream (pools above keep such blocks cached, which is where the reuse
 * happens). When no new slab can be had, a small request is served upstream directly.
 */
public final class SlabAllocator extends AllocatorDecorator {

	/** Offsets of carved blocks are multiples of this: CUDA's alignment for device allocations. */
	public static final long ALIGNMENT = 256;

	private final long slabBytes;

	private final long maxCarvedBytes;

	private Slab current;

	/**
	 * @param slabBytes the size of each slab
	 * @param maxCarvedBytes the largest request carved from a slab; at most a quarter of a slab
	 */
	public SlabAllocator(MemoryAllocator upstream, long slabBytes, long maxCarvedBytes) {
		super(upstream);
		MemoryAllocator.requirePositiveSize(slabBytes);
		MemoryAllocator.requirePositiveSize(maxCarvedBytes);
		if (maxCarvedBytes > slabBytes / 4) {
			throw new IllegalArgumentException("largest carved block " + maxCarvedBytes
					+ " must be at most a quarter of the slab size " + slabBytes);
		}
		this.slabBytes = slabBytes;
		this.maxCarvedBytes = maxCarvedBytes;
	}

	@Override
	public Allocation allocate(long bytes) {
		MemoryAllocator.requirePositiveSize(bytes);
		if (bytes > this.maxCarvedBytes) {
			return super.allocate(bytes);
		}
		long carved = (bytes + ALIGNMENT - 1) & -ALIGNMENT;
		synchronized (this) {
			Slab slab = this.current;
			if (slab == null || slab.remaining() < carved) {
				try {
					slab = new Slab(super.allocate(this.slabBytes));
				}
				catch (GpuOutOfMemoryException ex) {
					return super.allocate(bytes);
				}
				this.current = slab;
			}
			return slab.carve(this, carved, bytes);
		}
	}

	@Override
	public void free(Allocation allocation) {
		if (!(allocation instanceof CarvedAllocation carved) || carved.owner != this) {
			super.free(allocation);
			return;
		}
		carved.markFreed();
		Slab slab = carved.slab;
		synchronized (this) {
			if (--slab.live > 0) {
				return;
			}
			if (slab == this.current) {
				this.current = null;
			}
		}
		super.free(slab.block);
	}

	@Override
	public String describe() {
		return super.describe() + " carved in " + ByteSizes.format(this.slabBytes) + " slabs up to "
				+ ByteSizes.format(this.maxCarvedBytes);
	}

	/** One upstream block and the bump pointer of what has been cut from it. */
	private static final class Slab {

		final Allocation block;

		long used;

		int live;

		Slab(Allocation block) {
			this.block = block;
		}

		long remaining() {
			return this.block.size() - this.used;
		}

		CarvedAllocation carve(SlabAllocator owner, long carved, long bytes) {
			CarvedAllocation allocation = new CarvedAllocation(owner, this, this.block.slice(this.used, bytes));
			this.used += carved;
			this.live++;
			return allocation;
		}

	}

	/** A block cut from a slab: the slab's memory at an offset, freed on its own. */
	private static final class CarvedAllocation implements Allocation {

		final SlabAllocator owner;

		final Slab slab;

		private final Allocation view;

		private final AtomicBoolean freed = new AtomicBoolean();

		CarvedAllocation(SlabAllocator owner, Slab slab, Allocation view) {
			this.owner = owner;
			this.slab = slab;
			this.view = view;
		}

		@Override
		public long size() {
			return this.view.size();
		}

		@Override
		public MemoryKind kind() {
			return this.view.kind();
		}

		@Override
		public <T> T unwrap(Class<T> type) {
			checkNotFreed();
			return this.view.unwrap(type);
		}

		@Override
		public void copyFromHost(long byteOffset, Object array, int arrayIndex, int count, ElementType type) {
			checkNotFreed();
			this.view.copyFromHost(byteOffset, array, arrayIndex, count, type);
		}

		@Override
		public void copyToHost(long byteOffset, Object array, int arrayIndex, int count, ElementType type) {
			checkNotFreed();
			this.view.copyToHost(byteOffset, array, arrayIndex, count, type);
		}

		@Override
		public void fill(long byteOffset, long byteCount, byte value) {
			checkNotFreed();
			this.view.fill(byteOffset, byteCount, value);
		}

		@Override
		public void fillInts(long byteOffset, long count, int value) {
			checkNotFreed();
			this.view.fillInts(byteOffset, count, value);
		}

		@Override
		public Allocation slice(long byteOffset, long bytes) {
			checkNotFreed();
			return this.view.slice(byteOffset, bytes);
		}

		void markFreed() {
			if (!this.freed.compareAndSet(false, true)) {
				throw new IllegalStateException(kind() + " block of " + size() + " bytes carved from a slab freed twice");
			}
		}

		private void checkNotFreed() {
			if (this.freed.get()) {
				throw new IllegalStateException(kind() + " block of " + size() + " bytes carved from a slab used after free");
			}
		}

		@Override
		public String toString() {
			return "CarvedAllocation[" + kind() + ", " + size() + " bytes" + (this.freed.get() ? ", freed" : "") + "]";
		}

	}

}
