package io.gpumem.pool;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.arena.ArenaCounters;
import io.gpumem.pool.arena.Block;
import io.gpumem.pool.arena.ReservedBlocks;
import io.gpumem.pool.recovery.RecoveryCounters;

/**
 * Every count a pool keeps, and the one place its statistics are assembled. Counts are kept per slot: one
 * per size class and a last one ({@link #slot}) for the requests above the top class.
 * <p>
 * Requests, returns and the sizes requested are counted on the stripe of the thread that made them, under
 * that stripe's lock, which the request holds anyway ({@link Cell}): the hot path's only writes besides the
 * free list itself. The blocks reserved are counted by the tier that holds them (the arena, or the blocks above
 * the top class), under its own lock ({@link ReservedBlocks}). The rest are counted where memory is reserved, given
 * back or refused, off the hot path. No count takes a lock: a {@link #snapshot} reads
 * recent values, exact once no thread acquires or releases, and its totals are the sums of its rows, so its
 * rows always add up to them.
 */
final class PoolCounters implements RecoveryCounters, ArenaCounters {

	private final int classes;

	private final Cell[] cells;

	/** The reserved counts of each tier that holds blocks, in the order they were handed out. */
	private volatile ReservedBlocks[] reserved = {};

	private final AtomicLongArray misses;

	/** Per slot, the most buffers reserved when the class's use was counted ({@link #countUse}). */
	private final AtomicLongArray peakBuffers;

	/** Per slot, the misses that raised {@link #peakBuffers}: those a warm-up would have served. */
	private final AtomicLongArray coldMisses;

	private final AtomicLong peakReservedBytes = new AtomicLong();

	private final LongAdder trimmedBytes = new LongAdder();

	private final LongAdder allocationFailures = new LongAdder();

	private final LongAdder leakedBuffers = new LongAdder();

	private final LongAdder missNanos = new LongAdder();

	private final LongAdder waits = new LongAdder();

	private final LongAdder waitTimeouts = new LongAdder();

	private final LongAdder waitNanos = new LongAdder();

	private final LongAdder gcRequests = new LongAdder();

	private final LongAdder streamWaits = new LongAdder();

	private final LongAdder gaveWay = new LongAdder();

	PoolCounters(int classes, int stripes) {
		this.classes = classes;
		this.cells = new Cell[stripes];
		for (int i = 0; i < stripes; i++) {
			this.cells[i] = new Cell(classes);
		}
		this.misses = new AtomicLongArray(slots());
		this.peakBuffers = new AtomicLongArray(slots());
		this.coldMisses = new AtomicLongArray(slots());
	}

	/** The slot of a class, or for -1 that of the requests above the top class: the last. */
	private int slot(int classIndex) {
		return ReservedBlocks.slot(classIndex, this.classes);
	}

	/** Blocks reserved for a class (or {@link Block#ABOVE_TOP_CLASS}), lent or cached. */
	long reservedBuffers(int classIndex) {
		return reservedAt(slot(classIndex), false);
	}

	/** Bytes of the blocks reserved for a class (or {@link Block#ABOVE_TOP_CLASS}), lent or cached. */
	long reservedBytes(int classIndex) {
		return reservedAt(slot(classIndex), true);
	}

	/** The blocks reserved in a slot, or their bytes, summed over every tier that holds blocks. */
	private long reservedAt(int slot, boolean bytes) {
		long sum = 0;
		for (ReservedBlocks blocks : this.reserved) {
			sum += bytes ? blocks.bytes(slot) : blocks.buffers(slot);
		}
		return sum;
	}

	/** Slots per class-indexed array: the classes and the one above the top class. */
	int slots() {
		return this.classes + 1;
	}

	/** The counts of stripe {@code index}, to write only under that stripe's lock. */
	Cell cell(int index) {
		return this.cells[index];
	}

	/** New counts of the blocks one tier reserves, added to the pool's. */
	@Override
	public synchronized ReservedBlocks reserved() {
		ReservedBlocks blocks = new ReservedBlocks(this.classes);
		ReservedBlocks[] all = Arrays.copyOf(this.reserved, this.reserved.length + 1);
		all[all.length - 1] = blocks;
		this.reserved = all;
		return blocks;
	}

	/** Raises the peak of the bytes the pool holds to {@code reservedBytes}. */
	void notePeak(long reservedBytes) {
		this.peakReservedBytes.accumulateAndGet(reservedBytes, Math::max);
	}

	void countMiss(int classIndex) {
		this.misses.incrementAndGet(slot(classIndex));
	}

	/**
	 * After a request found no cached block of its class and got one elsewhere or allocated: every block of the
	 * class is in use (none was cached), so the blocks reserved are the class's use at that moment. A request that
	 * allocated and raised the peak is a cold miss. A block cut from memory the arena holds for every class, a hit,
	 * counts only where the arena never held more of the class, so that such a hit sums the tiers' counts only at
	 * a new high.
	 */
	@Override
	public void countUse(int classIndex, boolean allocated) {
		int slot = slot(classIndex);
		long buffers = reservedBuffers(classIndex);
		long peak;
		do {
			peak = this.peakBuffers.get(slot);
			if (buffers <= peak) {
				return;
			}
		}
		while (!this.peakBuffers.compareAndSet(slot, peak, buffers));
		if (allocated) {
			this.coldMisses.incrementAndGet(slot);
		}
	}

	@Override
	public void countTrimmed(long bytes) {
		this.trimmedBytes.add(bytes);
	}

	/**
	 * Counts an allocation that failed otherwise than for want of memory, but not a refusal while the pool sleeps
	 * ({@link PoolAsleepException}), which is none of the allocation's, as one at an acquire's start is not counted.
	 */
	@Override
	public void countAllocationFailure(RuntimeException failure) {
		if (!(failure instanceof PoolAsleepException)) {
			countAllocationFailure();
		}
	}

	/** Counts an acquire that failed, for want of memory or otherwise. */
	void countAllocationFailure() {
		this.allocationFailures.increment();
	}

	void countLeak() {
		this.leakedBuffers.increment();
	}

	/** Buffers reclaimed after becoming unreachable without close, so far. */
	long leaks() {
		return this.leakedBuffers.sum();
	}

	void countMissNanos(long nanos) {
		this.missNanos.add(nanos);
	}

	/** Counts an acquire that begins to wait for memory. */
	@Override
	public void countWait() {
		this.waits.increment();
	}

	/** Counts the end of a wait for memory that took {@code nanos}, served or, when {@code timedOut}, not. */
	@Override
	public void countWaitEnd(long nanos, boolean timedOut) {
		this.waitNanos.add(nanos);
		if (timedOut) {
			this.waitTimeouts.increment();
		}
	}

	/** Counts an acquire about to fail that asked the garbage collector for buffers dropped without close. */
	@Override
	public void countGcRequest() {
		this.gcRequests.increment();
	}

	@Override
	public void countGiveWay() {
		this.gaveWay.increment();
	}

	/** Counts an acquire about to fail that waited for the work of buffers closed after a stream. */
	@Override
	public void countStreamWait() {
		this.streamWaits.increment();
	}

	/**
	 * The pool's statistics, from these counts and what its tiers keep: {@code cachedBuffers} and
	 * {@code cachedBytes} per slot, and the arena's {@code segments}, whose free bytes belong to no class.
	 */
	PoolStatistics snapshot(String pool, MemoryKind kind, SizeClassLadder ladder, long maxCachedBytes,
			long[] cachedBuffers, long[] cachedBytes, PoolStatistics.Segments segments) {
		long[] requests = new long[slots()];
		long[] returns = new long[slots()];
		for (Cell cell : this.cells) {
			cell.addCounts(requests, returns);
		}
		List<SizeClassStatistics> rows = new ArrayList<>(slots());
		for (int s = 0; s <= this.classes; s++) {
			long misses = this.misses.get(s);
			rows.add(new SizeClassStatistics((s < this.classes) ? ladder.size(s) : 0, requests[s],
					Math.max(0, requests[s] - misses), misses, returns[s],
					Math.max(0, reservedAt(s, false) - cachedBuffers[s]),
					Math.max(0, reservedAt(s, true) - cachedBytes[s]), cachedBuffers[s], cachedBytes[s]));
		}
		SizeClassStatistics top = rows.remove(this.classes);
		return PoolStatistics.of(pool, kind, rows,
				new PoolStatistics.AboveTopClass(top.requests(), top.hits(), top.misses(), top.returns(),
						top.inUseBuffers(), top.inUseBytes(), top.cachedBuffers(), top.cachedBytes()),
				segments, this.missNanos.sum(), this.peakReservedBytes.get(), maxCachedBytes, this.trimmedBytes.sum(),
				this.allocationFailures.sum(), this.leakedBuffers.sum(),
				new PoolStatistics.Waits(this.waits.sum(), this.waitTimeouts.sum(), this.waitNanos.sum(),
						this.gcRequests.sum(), this.streamWaits.sum(), this.gaveWay.sum()));
	}

	/**
	 * What the pool recorded of its use, for the advice ({@code PoolAdvisor}): these counts with the statistics'
	 * totals.
	 */
	PoolUsage usage(PoolStatistics statistics, SizeClassLadder ladder) {
		long[] counts = new long[SizeHistogram.BUCKETS];
		long[] bytes = new long[SizeHistogram.BUCKETS];
		for (Cell cell : this.cells) {
			cell.addSizes(counts, bytes);
		}
		List<PoolUsage.ClassUse> uses = new ArrayList<>(this.classes);
		for (int c = 0; c < this.classes; c++) {
			uses.add(new PoolUsage.ClassUse(ladder.size(c), this.misses.get(c), this.coldMisses.get(c),
					this.peakBuffers.get(c)));
		}
		return new PoolUsage(statistics.name(), new SizeHistogram(counts, bytes), uses, statistics.requests(),
				statistics.hits(), statistics.maxCachedBytes(), statistics.peakReservedBytes());
	}

	/**
	 * The counts of one stripe: per slot the requests and returns, and the sizes requested, two longs a
	 * {@link SizeHistogram} bucket. Only the holder of the stripe's lock writes them; each array is padded by
	 * 128 bytes at both ends, so that two threads counting on two stripes never write one cache line.
	 */
	static final class Cell {

		private final int classes;

		private final long[] requests;

		private final long[] returns;

		private final long[] sizes;

		Cell(int classes) {
			this.classes = classes;
			this.requests = new long[ReservedBlocks.PAD + classes + 1 + ReservedBlocks.PAD];
			this.returns = new long[ReservedBlocks.PAD + classes + 1 + ReservedBlocks.PAD];
			this.sizes = new long[ReservedBlocks.PAD + 2 * SizeHistogram.BUCKETS + ReservedBlocks.PAD];
		}

		/** Counts a request of {@code bytes} of a class, or above the top class for -1. */
		void request(int classIndex, long bytes) {
			this.requests[ReservedBlocks.PAD + ReservedBlocks.slot(classIndex, this.classes)]++;
			int bucket = ReservedBlocks.PAD + 2 * SizeHistogram.bucket(bytes);
			this.sizes[bucket]++;
			this.sizes[bucket + 1] += bytes;
		}

		/** Counts a block of a class, or above the top class for -1, returned. */
		void returned(int classIndex) {
			this.returns[ReservedBlocks.PAD + ReservedBlocks.slot(classIndex, this.classes)]++;
		}

		private void addCounts(long[] requests, long[] returns) {
			for (int s = 0; s < requests.length; s++) {
				requests[s] += this.requests[ReservedBlocks.PAD + s];
				returns[s] += this.returns[ReservedBlocks.PAD + s];
			}
		}

		private void addSizes(long[] counts, long[] bytes) {
			for (int b = 0; b < counts.length; b++) {
				counts[b] += this.sizes[ReservedBlocks.PAD + 2 * b];
				bytes[b] += this.sizes[ReservedBlocks.PAD + 2 * b + 1];
			}
		}

	}

}
