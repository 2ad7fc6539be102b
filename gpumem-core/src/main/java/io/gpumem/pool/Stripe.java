package io.gpumem.pool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.Consumer;

/**
 * One stripe of a pool's free lists: a stack of cached blocks per size class and the counters of the
 * acquires and releases made on it, all behind one small spin lock. Threads are spread over stripes
 * round-robin ({@link StripeIndex}), so two request threads rarely meet on one lock (Netty's thread caches, jemalloc's
 * arenas).
 * <p>
 * Each stack is a ring: lent blocks are pushed and popped at its top, and trims take the least
 * recently used blocks from its bottom.
 */
final class Stripe extends StripePadding {

	private static final VarHandle LOCK;

	static {
		try {
			LOCK = MethodHandles.lookup().findVarHandle(Stripe.class, "lock", int.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private static final int PAD = 8;

	private static final int REQUESTS = 0;

	private static final int HITS = 1;

	private static final int RETURNS = 2;

	@SuppressWarnings("unused")
	private volatile int lock;

	/** Requests, hits and returns per class, between padding so that stripes do not share a cache line. */
	private final long[] counters;

	private final Block[][] stacks;

	private final int[] bottoms;

	private final int[] sizes;

	/** Bytes of the blocks in all stacks. */
	long cachedBytes;

	Stripe(int classes) {
		this.counters = new long[PAD + 3 * classes + PAD];
		this.stacks = new Block[classes][];
		this.bottoms = new int[PAD + classes + PAD];
		this.sizes = new int[PAD + classes + PAD];
		for (int i = 0; i < classes; i++) {
			this.stacks[i] = new Block[4];
		}
	}

	void lock() {
		if (!LOCK.compareAndSet(this, 0, 1)) {
			lockContended();
		}
	}

	/** Locks for the thread whose home this stripe is, moving that thread elsewhere if another holds it. */
	void lockHome() {
		if (!LOCK.compareAndSet(this, 0, 1)) {
			StripeIndex.advance();
			lockContended();
		}
	}

	private void lockContended() {
		int spins = 0;
		while (!LOCK.compareAndSet(this, 0, 1)) {
			if (++spins < 100) {
				Thread.onSpinWait();
			}
			else {
				Thread.yield();
			}
		}
	}

	void unlock() {
		LOCK.setRelease(this, 0);
	}

	void countRequest(int classIndex) {
		this.counters[PAD + 3 * classIndex + REQUESTS]++;
	}

	void countHit(int classIndex) {
		this.counters[PAD + 3 * classIndex + HITS]++;
	}

	void countReturn(int classIndex) {
		this.counters[PAD + 3 * classIndex + RETURNS]++;
	}

	long requests(int classIndex) {
		return this.counters[PAD + 3 * classIndex + REQUESTS];
	}

	long hits(int classIndex) {
		return this.counters[PAD + 3 * classIndex + HITS];
	}

	long returns(int classIndex) {
		return this.counters[PAD + 3 * classIndex + RETURNS];
	}

	/** Blocks cached in a class; exact under the lock, a recent value without it. */
	int cached(int classIndex) {
		return this.sizes[PAD + classIndex];
	}

	/** Pushes a block on top of its class's stack. */
	void push(Block block, long stamp) {
		int classIndex = block.classIndex;
		Block[] stack = this.stacks[classIndex];
		int size = this.sizes[PAD + classIndex];
		if (size == stack.length) {
			stack = grow(classIndex);
		}
		block.stamp = stamp;
		stack[(this.bottoms[PAD + classIndex] + size) & (stack.length - 1)] = block;
		this.sizes[PAD + classIndex] = size + 1;
		this.cachedBytes += block.size;
	}

	/** Pops the most recently pushed block of a class, or returns null. */
	Block pop(int classIndex) {
		int size = this.sizes[PAD + classIndex];
		if (size == 0) {
			return null;
		}
		Block[] stack = this.stacks[classIndex];
		int slot = (this.bottoms[PAD + classIndex] + size - 1) & (stack.length - 1);
		Block block = stack[slot];
		stack[slot] = null;
		this.sizes[PAD + classIndex] = size - 1;
		this.cachedBytes -= block.size;
		return block;
	}

	/** The least recently pushed block of a class, or null. */
	Block bottom(int classIndex) {
		return (this.sizes[PAD + classIndex] != 0) ? this.stacks[classIndex][this.bottoms[PAD + classIndex]] : null;
	}

	/** Removes and returns the least recently pushed block of a class, or returns null. */
	Block removeBottom(int classIndex) {
		int size = this.sizes[PAD + classIndex];
		if (size == 0) {
			return null;
		}
		Block[] stack = this.stacks[classIndex];
		int bottom = this.bottoms[PAD + classIndex];
		Block block = stack[bottom];
		stack[bottom] = null;
		this.bottoms[PAD + classIndex] = (bottom + 1) & (stack.length - 1);
		this.sizes[PAD + classIndex] = size - 1;
		this.cachedBytes -= block.size;
		return block;
	}

	/** Visits the cached blocks of a class from least to most recently pushed. */
	void forEachCached(int classIndex, Consumer<Block> action) {
		Block[] stack = this.stacks[classIndex];
		int bottom = this.bottoms[PAD + classIndex];
		for (int i = 0; i < this.sizes[PAD + classIndex]; i++) {
			action.accept(stack[(bottom + i) & (stack.length - 1)]);
		}
	}

	private Block[] grow(int classIndex) {
		Block[] old = this.stacks[classIndex];
		Block[] grown = new Block[old.length * 2];
		int bottom = this.bottoms[PAD + classIndex];
		for (int i = 0; i < old.length; i++) {
			grown[i] = old[(bottom + i) & (old.length - 1)];
		}
		this.stacks[classIndex] = grown;
		this.bottoms[PAD + classIndex] = 0;
		return grown;
	}

}

/** Keeps the lock word of one stripe off the cache line of the object allocated before it. */
@SuppressWarnings("unused")
abstract class StripePadding {

	private long p01, p02, p03, p04, p05, p06, p07, p08;

}
