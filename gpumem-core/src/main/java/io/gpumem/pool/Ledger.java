package io.gpumem.pool;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryAllocator;

/**
 * The books of what a pool holds from its allocator: every block, the buffers reserved per class, the
 * segments of the arena their blocks are cut from, the peak, the misses, blocks above the top class
 * (each an allocation of its own), and what was trimmed or refused. Read without a lock.
 */
final class Ledger {

	private final MemoryAllocator allocator;

	private final Arena arena;

	/** The pool's clock, which stamps segments as they fall free. */
	private final LongSupplier clock;

	/**
	 * Every block above the top class, lent or cached: this keeps lent blocks, and their leak watchers,
	 * reachable, as the arena's segments keep the classes' blocks through their spans.
	 */
	private final Set<Block> largeBlocks = ConcurrentHashMap.newKeySet();

	private final AtomicLongArray reservedBuffers;

	private final AtomicLongArray misses;

	/** Per class, the most buffers reserved when none was cached: the most the class had in use at once. */
	private final AtomicLongArray peakBuffers;

	/** Per class, the misses that raised {@link #peakBuffers}: those a warm-up would have served. */
	private final AtomicLongArray coldMisses;

	private final AtomicLong peakReservedBytes = new AtomicLong();

	private final LongAdder classMisses = new LongAdder();

	private final AtomicLong largeBuffers = new AtomicLong();

	private final AtomicLong largeBytes = new AtomicLong();

	private final LongAdder largeRequests = new LongAdder();

	private final LongAdder largeMisses = new LongAdder();

	private final LongAdder largeReturns = new LongAdder();

	private final LongAdder trimmedBytes = new LongAdder();

	private final LongAdder allocationFailures = new LongAdder();

	Ledger(MemoryAllocator allocator, int classes, long segmentBytes, LongSupplier clock) {
		this.allocator = allocator;
		this.arena = new Arena(allocator, segmentBytes);
		this.clock = clock;
		this.reservedBuffers = new AtomicLongArray(classes);
		this.misses = new AtomicLongArray(classes);
		this.peakBuffers = new AtomicLongArray(classes);
		this.coldMisses = new AtomicLongArray(classes);
	}

	/**
	 * A block of {@code size} bytes for a class, cut from the arena's free memory or from a new segment,
	 * or for -1 (above the top class) an allocation of its own; booked.
	 */
	Block reserve(int classIndex, long size) {
		if (classIndex < 0) {
			Block block = Block.of(this.allocator.allocate(size), -1, null);
			this.largeBlocks.add(block);
			this.largeBuffers.incrementAndGet();
			this.largeBytes.addAndGet(size);
			notePeak();
			return block;
		}
		Arena.Span span = this.arena.allocate(size);
		if (span.grew) {
			notePeak();
		}
		return bookSpan(classIndex, span);
	}

	private void notePeak() {
		this.peakReservedBytes.accumulateAndGet(reservedBytes(), Math::max);
	}

	/** Grows the arena by room for {@code count} blocks of {@code size} bytes, left free: a warm-up. */
	void grow(long size, int count) {
		this.arena.grow(size, count);
		notePeak();
	}

	/** A block of {@code size} bytes for a class from the arena's free memory, booked; null when none is free. */
	Block take(int classIndex, long size) {
		Arena.Span span = this.arena.take(size);
		return (span != null) ? bookSpan(classIndex, span) : null;
	}

	/** The span's block, made anew only when the span was cut or merged since it was last lent. */
	private Block bookSpan(int classIndex, Arena.Span span) {
		this.reservedBuffers.incrementAndGet(classIndex);
		Block block = span.block;
		if (block == null || block.size != span.size || block.classIndex != classIndex) {
			block = Block.of(span.slice(span.size), classIndex, span);
			span.block = block;
		}
		return block;
	}

	/** Gives a block back: a class's to the arena, one above the top class to the allocator. */
	void free(Block block) {
		free(block, this.clock.getAsLong());
	}

	private void free(Block block, long stamp) {
		if (block.span != null) {
			this.reservedBuffers.decrementAndGet(block.classIndex);
			this.arena.free(block.span, stamp);
		}
		else {
			this.largeBlocks.remove(block);
			this.largeBuffers.decrementAndGet();
			this.largeBytes.addAndGet(-block.size);
			this.allocator.free(block.allocation);
		}
	}

	/**
	 * Gives blocks back as a trim or the caps do: above the top class to the allocator, counted as
	 * trimmed; the classes' to the arena, whose segments only {@link #releaseSegments} gives back, as
	 * free since {@code stamp}.
	 * @return the bytes given back to the allocator
	 */
	long trim(Iterable<Block> trimmed, long stamp) {
		long bytes = 0;
		for (Block block : trimmed) {
			free(block, stamp);
			if (block.span == null) {
				bytes += block.size;
			}
		}
		this.trimmedBytes.add(bytes);
		return bytes;
	}

	/**
	 * Gives whole free segments back to the allocator, the longest held first, until they cover
	 * {@code bytes}; only those free since {@code cutoff} or before on the pool's clock.
	 * @return the bytes given back
	 */
	long releaseSegments(long bytes, long cutoff) {
		long released = 0;
		for (Allocation segment : this.arena.removeFreeSegments(bytes, cutoff)) {
			this.allocator.free(segment);
			released += segment.size();
		}
		this.trimmedBytes.add(released);
		return released;
	}

	/**
	 * After a request of the class found no cached block and got one cut or allocated: every buffer of the
	 * class is in use (none was cached), so the buffers reserved are the class's use at that moment. A
	 * request that allocated ({@code allocated}) and raised the peak is a cold miss.
	 */
	void countUse(int classIndex, boolean allocated) {
		long buffers = this.reservedBuffers.get(classIndex);
		long peak;
		do {
			peak = this.peakBuffers.get(classIndex);
			if (buffers <= peak) {
				return;
			}
		}
		while (!this.peakBuffers.compareAndSet(classIndex, peak, buffers));
		if (allocated) {
			this.coldMisses.incrementAndGet(classIndex);
		}
	}

	long peakBuffers(int classIndex) {
		return this.peakBuffers.get(classIndex);
	}

	long coldMisses(int classIndex) {
		return this.coldMisses.get(classIndex);
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

	/** Bytes held from the allocator: the arena's segments and the blocks above the top class. */
	long reservedBytes() {
		return this.arena.segmentBytes() + this.largeBytes.get();
	}

	/** The arena the classes' blocks are cut from. */
	Arena arena() {
		return this.arena;
	}

	long peakReservedBytes() {
		return this.peakReservedBytes.get();
	}

	long reservedBuffers(int classIndex) {
		return this.reservedBuffers.get(classIndex);
	}

	/** Buffers reserved in every class and above the top class, lent or cached. */
	long reservedBuffers() {
		long buffers = this.largeBuffers.get();
		for (int c = 0; c < this.reservedBuffers.length(); c++) {
			buffers += this.reservedBuffers.get(c);
		}
		return buffers;
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
