package io.gpumem.pool;

import java.util.function.IntConsumer;

/**
 * The blocks one thread keeps cached for one pool, and the counts of the requests, hits and returns it
 * made there: the hit path of a pool, as Netty's {@code PoolThreadCache} is Netty's. Only the owning
 * thread reads or changes the blocks, so a hit takes no lock and no atomic operation. Other threads
 * read the counts as recent values (exact once the owner has ended, which the pool sees through
 * {@link Thread#isAlive()}) and never touch the blocks: they ask the owner to flush by moving the pool's
 * epoch on, and take the blocks themselves only once the owner has ended.
 */
final class ThreadCache {

	private static final int REQUESTS = 0;

	private static final int HITS = 1;

	private static final int RETURNS = 2;

	/** Leak detection {@code simple} watches one acquire in this many, as Netty's default sampling does. */
	static final int LEAK_SAMPLING_INTERVAL = 128;

	final Thread owner;

	/** The pool's epoch when this cache last flushed; a cache whose epoch is behind flushes before its next use. */
	int epoch;

	/** The ids of the cached blocks ({@link BlockTable}): a stack of {@code capacity} per class. */
	private final int[] ids;

	private final int capacity;

	private final int[] sizes;

	private final long[] counters;

	private final long maxBytes;

	private long bytes;

	private int leakSample;

	ThreadCache(Thread owner, int classes, int buffersPerClass, long maxBytes, int epoch) {
		this.owner = owner;
		this.epoch = epoch;
		this.ids = new int[classes * buffersPerClass];
		this.capacity = buffersPerClass;
		this.sizes = new int[classes];
		this.counters = new long[3 * classes];
		this.maxBytes = maxBytes;
	}

	/** Counts a request and pops the id of the most recently cached block of the class, counting a hit, or answers -1. */
	int poll(int classIndex) {
		increment(3 * classIndex + REQUESTS);
		int size = this.sizes[classIndex];
		if (size == 0) {
			return -1;
		}
		this.sizes[classIndex] = size - 1;
		increment(3 * classIndex + HITS);
		return this.ids[classIndex * this.capacity + size - 1];
	}

	/** Records that a block of {@code size} bytes left the cache through {@link #poll(int)}. */
	void lent(long size) {
		this.bytes -= size;
	}

	/** Counts a return; caches the block if allowed and its class and the byte budget have room, and answers whether it did. */
	boolean offer(Block block, boolean mayCache) {
		int classIndex = block.classIndex;
		countReturn(classIndex);
		int size = this.sizes[classIndex];
		if (!mayCache || size == this.capacity || this.bytes + block.size > this.maxBytes) {
			return false;
		}
		this.ids[classIndex * this.capacity + size] = block.id;
		this.sizes[classIndex] = size + 1;
		this.bytes += block.size;
		return true;
	}

	void countReturn(int classIndex) {
		increment(3 * classIndex + RETURNS);
	}

	/** Whether the next acquire should be watched for leaks at level {@code simple}: one in {@link #LEAK_SAMPLING_INTERVAL}. */
	boolean sampleLeak() {
		return (this.leakSample++ & (LEAK_SAMPLING_INTERVAL - 1)) == 0;
	}

	/** Removes every cached block, least recently cached first within each class, handing each id to {@code sink}. */
	void drain(IntConsumer sink) {
		for (int c = 0; c < this.sizes.length; c++) {
			for (int i = 0; i < this.sizes[c]; i++) {
				sink.accept(this.ids[c * this.capacity + i]);
			}
			this.sizes[c] = 0;
		}
		this.bytes = 0;
	}

	/** Blocks cached in a class: exact on the owner's thread or once it has ended, a recent value otherwise. */
	int cached(int classIndex) {
		return this.sizes[classIndex];
	}

	/** Bytes cached in all classes, with the exactness of {@link #cached(int)}. */
	long cachedBytes() {
		return this.bytes;
	}

	long requests(int classIndex) {
		return this.counters[3 * classIndex + REQUESTS];
	}

	long hits(int classIndex) {
		return this.counters[3 * classIndex + HITS];
	}

	long returns(int classIndex) {
		return this.counters[3 * classIndex + RETURNS];
	}

	private void increment(int counter) {
		this.counters[counter]++;
	}

}
