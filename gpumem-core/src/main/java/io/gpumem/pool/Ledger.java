package io.gpumem.pool;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryAllocator;

/**
 * The books of what a pool holds from its allocator: every block, the bytes and buffers reserved per
 * class, the peak, the misses that reserved them, blocks above the top class, and what was trimmed or
 * refused. Written on the slow paths only; read without a lock.
 */
final class Ledger {

	private final MemoryAllocator allocator;

	/** Every block held, lent or cached: this keeps lent blocks, and their leak watchers, reachable. */
	private final Set<Block> blocks = ConcurrentHashMap.newKeySet();

	private final AtomicLongArray reservedBuffers;

	private final AtomicLongArray misses;

	private final AtomicLong classBuffers = new AtomicLong();

	private final AtomicLong reservedBytes = new AtomicLong();

	private final AtomicLong peakReservedBytes = new AtomicLong();

	private final LongAdder classMisses = new LongAdder();

	private final AtomicLong largeBuffers = new AtomicLong();

	private final AtomicLong largeBytes = new AtomicLong();

	private final LongAdder largeRequests = new LongAdder();

	private final LongAdder largeMisses = new LongAdder();

	private final LongAdder largeReturns = new LongAdder();

	private final LongAdder trimmedBytes = new LongAdder();

	private final LongAdder allocationFailures = new LongAdder();

	Ledger(MemoryAllocator allocator, int classes) {
		this.allocator = allocator;
		this.reservedBuffers = new AtomicLongArray(classes);
		this.misses = new AtomicLongArray(classes);
	}

	/** Allocates a block of {@code size} bytes for a class, or above the top class for -1, and books it. */
	Block reserve(int classIndex, long size) {
		Allocation allocation = this.allocator.allocate(size);
		Block block = Block.of(allocation, classIndex);
		this.blocks.add(block);
		if (classIndex >= 0) {
			this.reservedBuffers.incrementAndGet(classIndex);
			this.classBuffers.incrementAndGet();
		}
		else {
			this.largeBuffers.incrementAndGet();
			this.largeBytes.addAndGet(size);
		}
		this.peakReservedBytes.accumulateAndGet(this.reservedBytes.addAndGet(size), Math::max);
		return block;
	}

	/** Gives a block back to the allocator. */
	void free(Block block) {
		this.blocks.remove(block);
		if (block.classIndex >= 0) {
			this.reservedBuffers.decrementAndGet(block.classIndex);
			this.classBuffers.decrementAndGet();
		}
		else {
			this.largeBuffers.decrementAndGet();
			this.largeBytes.addAndGet(-block.size);
		}
		this.reservedBytes.addAndGet(-block.size);
		this.allocator.free(block.allocation);
	}

	/** Gives blocks back to the allocator as a trim or the caps do, counting them as trimmed; answers their bytes. */
	long trim(Iterable<Block> trimmed) {
		long bytes = 0;
		for (Block block : trimmed) {
			free(block);
			bytes += block.size;
		}
		this.trimmedBytes.add(bytes);
		return bytes;
	}

	void countMiss(int classIndex) {
		this.misses.incrementAndGet(classIndex);
		this.classMisses.increment();
	}

	void countLargeRequest() {
		this.largeRequests.increment();
	}

	void countLargeMiss() {
		this.largeMisses.increment();
	}

	void countLargeReturn() {
		this.largeReturns.increment();
	}

	void countAllocationFailure() {
		this.allocationFailures.increment();
	}

	long reservedBytes() {
		return this.reservedBytes.get();
	}

	long peakReservedBytes() {
		return this.peakReservedBytes.get();
	}

	long reservedBuffers(int classIndex) {
		return this.reservedBuffers.get(classIndex);
	}

	/** Buffers reserved in every class and above the top class, lent or cached. */
	long reservedBuffers() {
		return this.classBuffers.get() + this.largeBuffers.get();
	}

	long misses(int classIndex) {
		return this.misses.get(classIndex);
	}

	/** Misses of every class and above the top class, each of which allocated. */
	long misses() {
		return this.classMisses.sum() + this.largeMisses.sum();
	}

	long largeMisses() {
		return this.largeMisses.sum();
	}

	long largeRequests() {
		return this.largeRequests.sum();
	}

	long largeReturns() {
		return this.largeReturns.sum();
	}

	/** Blocks reserved above the top class, lent or cached. */
	long largeBuffers() {
		return this.largeBuffers.get();
	}

	/** Bytes of the blocks reserved above the top class, lent or cached. */
	long largeBytes() {
		return this.largeBytes.get();
	}

	long trimmedBytes() {
		return this.trimmedBytes.sum();
	}

	long allocationFailures() {
		return this.allocationFailures.sum();
	}

}
