package io.gpumem.pool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;

/**
 * One stripe of a pool's free lists: a stack of cached blocks per size class, stamped with when each was
 * pushed, and the counts of the requests and returns made on it, all behind one small spin lock. Only
 * the lock's holder writes, and it writes nothing into the blocks, which two threads may hold side by
 * side in memory; statistics read the counts and sizes without the lock, as recent values.
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

	/** Padding, in array elements, at both ends of what the lock's holder writes. */
	private static final int PAD = 16;

	@SuppressWarnings("unused")
	private volatile int lock;

	private final int classes;

	/** Per class, requests counted here, then returns; then the requests and returns of every class together. */
	private final long[] counts;

	private final Block[][] stacks;

	/** The pool's clock when each cached block was pushed, slot for slot with {@link #stacks}. */
	private final long[][] stamps;

	private final int[] bottoms;

	private final int[] sizes;

	/** Bytes of the blocks in all stacks. */
	private long cachedBytes;

	/** Blocks in all stacks. */
	private int cachedBuffers;

	/** Set by {@link #close(List)}: the stripe takes no more blocks. */
	private boolean closed;

	Stripe(int classes) {
		this.classes = classes;
		this.counts = new long[PAD + 2 * classes + 2 + PAD];
		this.stacks = new Block[classes][];
		this.stamps = new long[classes][];
		this.bottoms = new int[PAD + classes + PAD];
		this.sizes = new int[PAD + classes + PAD];
		for (int i = 0; i < classes; i++) {
			this.stacks[i] = new Block[4];
			this.stamps[i] = new long[4];
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
			ThreadState.moveOn();
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
		this.counts[PAD + classIndex]++;
		this.counts[PAD + 2 * this.classes]++;
	}

	void countReturn(int classIndex) {
		this.counts[PAD + this.classes + classIndex]++;
		this.counts[PAD + 2 * this.classes + 1]++;
	}

	long requests(int classIndex) {
		return this.counts[PAD + classIndex];
	}

	long returns(int classIndex) {
		return this.counts[PAD + this.classes + classIndex];
	}

	/** Requests of every class counted here. */
	long requests() {
		return this.counts[PAD + 2 * this.classes];
	}

	/** Returns of every class counted here. */
	long returns() {
		return this.counts[PAD + 2 * this.classes + 1];
	}

	/** Blocks cached in a class. */
	int cached(int classIndex) {
		return this.sizes[PAD + classIndex];
	}

	long cachedBytes() {
		return this.cachedBytes;
	}

	int cachedBuffers() {
		return this.cachedBuffers;
	}

	/** Pushes a block on top of its class's stack, stamped; answers false, pushing nothing, once closed. */
	boolean push(Block block, long stamp) {
		if (this.closed) {
			return false;
		}
		int classIndex = block.classIndex;
		Block[] stack = this.stacks[classIndex];
		int size = this.sizes[PAD + classIndex];
		if (size == stack.length) {
			stack = grow(classIndex);
		}
		int slot = (this.bottoms[PAD + classIndex] + size) & (stack.length - 1);
		stack[slot] = block;
		this.stamps[classIndex][slot] = stamp;
		this.sizes[PAD + classIndex] = size + 1;
		this.cachedBytes += block.size;
		this.cachedBuffers++;
		return true;
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
		taken(classIndex, size, block);
		return block;
	}

	/** When the least recently pushed block of a class was pushed, or {@link Long#MAX_VALUE} when none is. */
	long bottomStamp(int classIndex) {
		return (this.sizes[PAD + classIndex] != 0) ? this.stamps[classIndex][this.bottoms[PAD + classIndex]]
				: Long.MAX_VALUE;
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
		taken(classIndex, size, block);
		return block;
	}

	/** Adds the stamp and size of each cached block, as {@code {stamp, size}}, to {@code stamps}. */
	void collectStamps(List<long[]> stamps) {
		for (int c = 0; c < this.classes; c++) {
			Block[] stack = this.stacks[c];
			int bottom = this.bottoms[PAD + c];
			for (int i = 0; i < this.sizes[PAD + c]; i++) {
				int slot = (bottom + i) & (stack.length - 1);
				stamps.add(new long[] { this.stamps[c][slot], stack[slot].size });
			}
		}
	}

	/** Takes every cached block into {@code blocks} and takes no more. */
	void close(List<Block> blocks) {
		this.closed = true;
		for (int c = 0; c < this.classes; c++) {
			for (Block block = pop(c); block != null; block = pop(c)) {
				blocks.add(block);
			}
		}
	}

	private void taken(int classIndex, int size, Block block) {
		this.sizes[PAD + classIndex] = size - 1;
		this.cachedBytes -= block.size;
		this.cachedBuffers--;
	}

	private Block[] grow(int classIndex) {
		Block[] old = this.stacks[classIndex];
		long[] oldStamps = this.stamps[classIndex];
		Block[] grown = new Block[old.length * 2];
		long[] grownStamps = new long[old.length * 2];
		int bottom = this.bottoms[PAD + classIndex];
		for (int i = 0; i < old.length; i++) {
			grown[i] = old[(bottom + i) & (old.length - 1)];
			grownStamps[i] = oldStamps[(bottom + i) & (old.length - 1)];
		}
		this.stacks[classIndex] = grown;
		this.stamps[classIndex] = grownStamps;
		this.bottoms[PAD + classIndex] = 0;
		return grown;
	}

}

/**
 * Keeps the lock word of one stripe, and what its holder writes beside it, 128 bytes off the objects
 * before it (two cache lines, as the adjacent-line prefetcher fetches them in pairs); what follows a
 * stripe is padded arrays or another stripe.
 */
@SuppressWarnings("unused")
abstract class StripePadding {

	private long p01, p02, p03, p04, p05, p06, p07, p08, p09, p10, p11, p12, p13, p14, p15, p16;

}
