package io.gpumem.allocator;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.memory.MemoryKind;
import io.gpumem.memory.OutOfMemoryDiagnostic;

/**
 * An allocator of a device's capacity without its memory: it books each allocation against the capacity and
 * holds no bytes, so that a pool's recorded history can be replayed against a device of any size. Its
 * allocations refuse every read and write.
 */
public final class BookkeepingAllocator implements MemoryAllocator {

	private final MemoryKind kind;

	/** The device's capacity, which allocations draw on. */
	private final MemoryBudget capacity;

	private final Set<Allocation> live = ConcurrentHashMap.newKeySet();

	public BookkeepingAllocator(MemoryKind kind, long capacityBytes) {
		this.kind = kind;
		this.capacity = new MemoryBudget(capacityBytes);
	}

	@Override
	public MemoryKind kind() {
		return this.kind;
	}

	@Override
	public Allocation allocate(long bytes) {
		MemoryAllocator.requirePositiveSize(bytes);
		if (!this.capacity.tryDraw(bytes)) {
			throw new GpuOutOfMemoryException(
					OutOfMemoryDiagnostic.of(this.kind, bytes, memoryInfo(), -1, "the booked capacity is exhausted"));
		}
		Booked booked = new Booked(this, bytes);
		this.live.add(booked);
		return booked;
	}

	@Override
	public void free(Allocation allocation) {
		if (!this.live.remove(allocation)) {
			throw new IllegalArgumentException("not a live allocation of this allocator (freed already, or a slice): "
					+ allocation);
		}
		this.capacity.giveBack(allocation.size());
	}

	@Override
	public MemoryInfo memoryInfo() {
		return new MemoryInfo(this.capacity.limitBytes() - this.capacity.usedBytes(), this.capacity.limitBytes());
	}

	/** An allocation, or a slice of one, that holds no memory. */
	private static final class Booked implements Allocation {

		private final BookkeepingAllocator owner;

		private final long bytes;

		Booked(BookkeepingAllocator owner, long bytes) {
			this.owner = owner;
			this.bytes = bytes;
		}

		@Override
		public long size() {
			return this.bytes;
		}

		@Override
		public MemoryKind kind() {
			return this.owner.kind;
		}

		@Override
		public <T> T unwrap(Class<T> type) {
			throw unbacked();
		}

		@Override
		public void copyFromHost(long byteOffset, Object array, int arrayIndex, int count, ElementType type) {
			throw unbacked();
		}

		@Override
		public void copyToHost(long byteOffset, Object array, int arrayIndex, int count, ElementType type) {
			throw unbacked();
		}

		@Override
		public void fill(long byteOffset, long byteCount, byte value) {
			throw unbacked();
		}

		@Override
		public void fillInts(long byteOffset, long count, int value) {
			throw unbacked();
		}

		@Override
		public Allocation slice(long byteOffset, long bytes) {
			if (byteOffset < 0 || bytes <= 0 || byteOffset + bytes > this.bytes) {
				throw new IllegalArgumentException("slice [" + byteOffset + ", +" + bytes + ") outside " + this.bytes
						+ " bytes");
			}
			return new Booked(this.owner, bytes);
		}

		private static UnsupportedOperationException unbacked() {
			return new UnsupportedOperationException("a booked allocation holds no memory");
		}

	}

}
