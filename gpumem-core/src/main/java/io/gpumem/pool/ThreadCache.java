package io.gpumem.pool;

/**
 * The blocks one thread keeps cached for one pool, and the counts of the requests, hits and returns it
 * made there: the hit path of a pool, as Netty's {@code PoolThreadCache} is Netty's. Only the owning
 * thread reads or changes the blocks, so a hit takes no lock and no atomic operation. Other threads
 * read the counts as recent values (exact once the owner has ended, which the pool sees through
 * {@link Thread#isAlive()}) and never touch the blocks: they ask the owner to flush by moving the pool's
 * epoch on, and take the blocks themselves only once the owner has ended.
 * <p>
 * Everything the owner writes on the hit path lies in arrays padded at both ends, so that the caches of
 * two threads never share a cache line, wherever the garbage collector moves them.
 */
final class ThreadCache {

	/** Leak detection {@code simple} watches one acquire in this many, as Netty's default sampling does. */
	static final int LEAK_SAMPLING_INTERVAL = 128;

	/** 128 bytes of padding, two cache lines, in longs and in ints. */
	private static final int LONG_PAD = 16;

	private static final int INT_PAD = 32;

	private static final int REQUESTS = 0;

	/** Requests the cache could not serve, which went on to the shared lists; hits are the rest. */
	private static final int PASSED_ON = 1;

	private static final int RETURNS = 2;

	final Thread owner;

	/** The pool's epoch when this cache last flushed; a cache whose epoch is behind flushes before its next use. */
	int epoch;

	private final int capacity;

	private final long maxBytes;

	/** Per class, {@code capacity} slots of the ids of the cached blocks ({@link BlockTable}), as a stack. */
	private final int[] ids;

	/** The pool's clock when each cached block was cached, slot for slot with {@link #ids}. */
	private final long[] stamps;

	/** Per class, the number of cached blocks. */
	private final int[] sizes;

	/** Per class, requests, requests passed on and returns; then the bytes cached and the leak sampling counter. */
	private final long[] counters;

	private final int bytesIndex;

	private final int leakIndex;

	ThreadCache(Thread owner, int classes, int buffersPerClass, long maxBytes, int epoch) {
		this.owner = owner;
		this.epoch = epoch;
		this.capacity = buffersPerClass;
		this.maxBytes = maxBytes;
		this.ids = new int[INT_PAD + classes * buffersPerClass + INT_PAD];
		this.stamps = new long[LONG_PAD + classes * buffersPerClass + LONG_PAD];
		this.sizes = new int[INT_PAD + classes + INT_PAD];
		this.counters = new long[LONG_PAD + 3 * classes + 2 + LONG_PAD];
		this.bytesIndex = LONG_PAD + 3 * classes;
		this.leakIndex = this.bytesIndex + 1;
	}

	/** Counts a request and pops the id of the most recently cached block of the class, or answers -1 and counts the request passed on. */
	int poll(int classIndex) {
		this.counters[LONG_PAD + 3 * classIndex + REQUESTS]++;
		int size = this.sizes[INT_PAD + classIndex];
		if (size == 0) {
			this.counters[LONG_PAD + 3 * classIndex + PASSED_ON]++;
			return -1;
		}
		this.sizes[INT_PAD + classIndex] = size - 1;
		return this.ids[INT_PAD + classIndex * this.capacity + size - 1];
	}

	/** Records that a block of {@code size} bytes left the cache through {@link #poll(int)}. */
	void lent(long size) {
		this.counters[this.bytesIndex] -= size;
	}

	/**
	 * Counts a return; caches the block, stamped, if allowed and its class and the byte budget have
	 * room, and answers whether it did.
	 */
	boolean offer(Block block, boolean mayCache, long stamp) {
		int classIndex = block.classIndex;
		countReturn(classIndex);
		int size = this.sizes[INT_PAD + classIndex];
		long bytes = this.counters[this.bytesIndex];
		if (!mayCache || size == this.capacity || bytes + block.size > this.maxBytes) {
			return false;
		}
		int slot = classIndex * this.capacity + size;
		this.ids[INT_PAD + slot] = block.id;
		this.stamps[LONG_PAD + slot] = stamp;
		this.sizes[INT_PAD + classIndex] = size + 1;
		this.counters[this.bytesIndex] = bytes + block.size;
		return true;
	}

	void countReturn(int classIndex) {
		this.counters[LONG_PAD + 3 * classIndex + RETURNS]++;
	}

	/** Whether the next acquire should be watched for leaks at level {@code simple}: one in {@link #LEAK_SAMPLING_INTERVAL}. */
	boolean sampleLeak() {
		return (this.counters[this.leakIndex]++ & (LEAK_SAMPLING_INTERVAL - 1)) == 0;
	}

	/** Removes every cached block, least recently cached first within each class, handing each id and stamp to {@code sink}. */
	void drain(Drain sink) {
		int classes = this.sizes.length - 2 * INT_PAD;
		for (int c = 0; c < classes; c++) {
			for (int i = 0; i < this.sizes[INT_PAD + c]; i++) {
				int slot = c * this.capacity + i;
				sink.accept(this.ids[INT_PAD + slot], this.stamps[LONG_PAD + slot]);
			}
			this.sizes[INT_PAD + c] = 0;
		}
		this.counters[this.bytesIndex] = 0;
	}

	/** Blocks cached in a class: exact on the owner's thread or once it has ended, a recent value otherwise. */
	int cached(int classIndex) {
		return this.sizes[INT_PAD + classIndex];
	}

	/** Bytes cached in all classes, with the exactness of {@link #cached(int)}. */
	long cachedBytes() {
		return this.counters[this.bytesIndex];
	}

	long requests(int classIndex) {
		return this.counters[LONG_PAD + 3 * classIndex + REQUESTS];
	}

	/** Requests served from this cache; a recent value unless read by the owner or after it ended. */
	long hits(int classIndex) {
		return this.counters[LONG_PAD + 3 * classIndex + REQUESTS] - this.counters[LONG_PAD + 3 * classIndex + PASSED_ON];
	}

	long returns(int classIndex) {
		return this.counters[LONG_PAD + 3 * classIndex + RETURNS];
	}

	/** Receives the blocks of a drained cache. */
	@FunctionalInterface
	interface Drain {

		void accept(int id, long stamp);

	}

}
