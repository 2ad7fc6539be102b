package io.gpumem.pool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.ObjLongConsumer;

import io.gpumem.pool.arena.Block;
import io.gpumem.pool.arena.Padding;
import io.gpumem.pool.arena.ReservedBlocks;

/**
 * One stripe of a pool's free lists: a stack of cached blocks per size class, stamped with when each was
 * pushed, per class the fewest blocks it held since the last sweep, the last block returned of a class above the
 * free lists' ({@link #keepLast}, the tier {@link LastBlocks}), and the pool's counts of the requests and returns made
 * on it ({@link PoolCounters.Cell}), all behind one small spin lock. Only the lock's holder writes, and it
 * writes nothing into the blocks, which two threads may hold side by side in memory; statistics read the counts
 * and sizes without the lock, as recent values.
 * <p>
 * Each stack is a ring: lent blocks are pushed and popped at its top, and trims take the least
 * recently used blocks from its bottom. Everything the lock's holder writes is padded by 128 bytes on
 * both sides, so that two threads working on two stripes never write one cache line, wherever the
 * collector moves the stripes, their arrays and the blocks.
 */
final class Stripe extends StripeState {

	private static final VarHandle LOCK;

	static {
		try {
			LOCK = MethodHandles.lookup().findVarHandle(StripeState.class, "lock", int.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	/** Padding, in array elements, at both ends of what the lock's holder writes: as the pool's counts. */
	private static final int PAD = ReservedBlocks.PAD;

	/** Slots left unused at the end of each stack and its stamps: 128 bytes of references, and of longs. */
	private static final int REF_SLACK = 32;

	private static final int LONG_SLACK = 16;

	@SuppressWarnings("unused")
	private long q01, q02, q03, q04, q05, q06, q07, q08, q09, q10, q11, q12, q13, q14, q15, q16;

	/** A stripe of {@code classes} stacks, of which the first {@code cachedClasses} may hold blocks. */
	Stripe(int classes, int cachedClasses, PoolCounters.Cell counts, int sweepReturns) {
		super(classes, cachedClasses, counts, sweepReturns, PAD);
		for (int i = 0; i < classes; i++) {
			this.stacks[i] = new Block[4 + REF_SLACK];
			this.stamps[i] = new long[4 + LONG_SLACK];
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

	/** Runs {@code action} on each of {@code stripes} in turn, under its lock. */
	static void eachLocked(Stripe[] stripes, Consumer<Stripe> action) {
		for (Stripe stripe : stripes) {
			stripe.lock();
			try {
				action.accept(stripe);
			}
			finally {
				stripe.unlock();
			}
		}
	}

	/** Blocks cached in a class. */
	int cached(int classIndex) {
		return this.sizes[PAD + classIndex];
	}

	long cachedBytes() {
		return this.cachedBytes;
	}

	/** Pushes a block on top of its class's stack, stamped; answers false, pushing nothing, once closed. */
	boolean push(Block block, long stamp) {
		if (this.closed) {
			return false;
		}
		int classIndex = block.classIndex;
		Block[] stack = this.stacks[classIndex];
		int size = this.sizes[PAD + classIndex];
		if (size == capacity(stack)) {
			stack = grow(classIndex);
		}
		int slot = (this.bottoms[PAD + classIndex] + size) & (capacity(stack) - 1);
		stack[slot] = block;
		this.stamps[classIndex][slot] = stamp;
		this.sizes[PAD + classIndex] = size + 1;
		this.cachedBytes += block.size;
		return true;
	}

	/**
	 * Keeps {@code block}, of a class above the free lists', as the stripe's last returned, stamped, for the next
	 * request of its exact size ({@link #takeLast}); answers the block it replaces, or {@code block} itself once
	 * closed, for the arena.
	 */
	Block keepLast(Block block, long stamp) {
		if (this.closed) {
			return block;
		}
		Block replaced = takeLast();
		this.last = block;
		this.lastStamp = stamp;
		return replaced;
	}

	/**
	 * Notes a request of {@code size} bytes of a class above the free lists': it repeats the stripe's requests where it
	 * asks for the size last returned, which a last block kept would have served.
	 */
	void requested(long size) {
		this.repeating = size == this.returnedSize;
	}

	/**
	 * Notes the return of a block of {@code size} bytes of a class above the free lists', and answers whether to keep it
	 * as the last: whether the stripe's last such request asked for the size returned before it. Where sizes do not
	 * repeat (the service workload's), nothing is kept to lie idle while other sizes are cut around it.
	 */
	boolean repeats(long size) {
		this.returnedSize = size;
		return this.repeating;
	}

	/** Takes the last returned block above the free lists' classes, or returns null. */
	Block takeLast() {
		Block kept = this.last;
		this.last = null;
		return kept;
	}

	/** The last returned block above the free lists' classes, read without the lock: a recent value. */
	Block last() {
		return this.last;
	}

	/** When the last returned block above the free lists' classes was returned, or {@link Long#MAX_VALUE}. */
	long lastStamp() {
		return (this.last != null) ? this.lastStamp : Long.MAX_VALUE;
	}

	/** Pops the most recently pushed block of a class, or returns null. */
	Block pop(int classIndex) {
		int size = this.sizes[PAD + classIndex];
		if (size == 0) {
			return null;
		}
		Block[] stack = this.stacks[classIndex];
		int slot = (this.bottoms[PAD + classIndex] + size - 1) & (capacity(stack) - 1);
		Block block = stack[slot];
		stack[slot] = null;
		taken(classIndex, size, block);
		return block;
	}

	/**
	 * Counts the return of a block of a class (or {@link Block#ABOVE_TOP_CLASS}) on this stripe, and answers the blocks
	 * a sweep took out ({@link #returned}).
	 */
	List<Idle> countReturn(int classIndex) {
		this.counts.returned(classIndex);
		return returned();
	}

	/**
	 * Counts a return on this stripe; on every {@link CachePolicy#sweepReturns}th, takes out of each class three
	 * quarters, rounded up, of the blocks none took since the last sweep, the least recently pushed first, and
	 * answers them with their stamps; null between sweeps.
	 */
	private List<Idle> returned() {
		return (--this.untilSweep > 0) ? null : sweep();
	}

	private List<Idle> sweep() {
		this.untilSweep = this.sweepReturns;
		List<Idle> swept = null;
		for (int c = 0; c < this.cachedClasses; c++) {
			int idle = this.lows[PAD + c];
			if (idle != 0) {
				swept = (swept != null) ? swept : new ArrayList<>();
				for (int n = idle - idle / 4; n > 0; n--) {
					long stamp = bottomStamp(c);
					swept.add(new Idle(removeBottom(c), stamp));
				}
			}
		}
		System.arraycopy(this.sizes, PAD, this.lows, PAD, this.cachedClasses);
		return swept;
	}

	/** A block a sweep took out, and when it was pushed. */
	record Idle(Block block, long stamp) {
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
		this.bottoms[PAD + classIndex] = (bottom + 1) & (capacity(stack) - 1);
		taken(classIndex, size, block);
		return block;
	}

	/**
	 * Adds the stamp and size of each block in the stacks cached at {@code cutoff} or before, as {@code {stamp,
	 * size}}, to {@code stamps}.
	 */
	void collectStamps(List<long[]> stamps, long cutoff) {
		for (int c = 0; c < this.classes; c++) {
			Block[] stack = this.stacks[c];
			int bottom = this.bottoms[PAD + c];
			for (int i = 0; i < this.sizes[PAD + c]; i++) {
				int slot = (bottom + i) & (capacity(stack) - 1);
				if (this.stamps[c][slot] <= cutoff) {
					stamps.add(new long[] { this.stamps[c][slot], stack[slot].size });
				}
			}
		}
	}

	/** Hands the last block, if any, to {@code cached} with its stamp; under the stripe's lock. */
	void collectLast(ObjLongConsumer<Block> cached) {
		if (this.last != null) {
			cached.accept(this.last, this.lastStamp);
		}
	}

	/** Hands each block in the stacks to {@code cached} with its stamp; under the stripe's lock. */
	void collect(ObjLongConsumer<Block> cached) {
		for (int c = 0; c < this.classes; c++) {
			for (int i = 0; i < this.sizes[PAD + c]; i++) {
				int slot = (this.bottoms[PAD + c] + i) & (capacity(this.stacks[c]) - 1);
				cached.accept(this.stacks[c][slot], this.stamps[c][slot]);
			}
		}
	}

	/** Takes every block in the stacks into {@code blocks}, and keeps no more, in the stacks or as the last. */
	void close(List<Block> blocks) {
		this.closed = true;
		for (int c = 0; c < this.classes; c++) {
			for (Block block = pop(c); block != null; block = pop(c)) {
				blocks.add(block);
			}
		}
	}

	/** Takes the last block into {@code blocks}, and keeps no more, in the stacks or as the last. */
	void closeLast(List<Block> blocks) {
		this.closed = true;
		Block kept = takeLast();
		if (kept != null) {
			blocks.add(kept);
		}
	}

	private void taken(int classIndex, int size, Block block) {
		this.sizes[PAD + classIndex] = size - 1;
		this.lows[PAD + classIndex] = Math.min(this.lows[PAD + classIndex], size - 1);
		this.cachedBytes -= block.size;
	}

	/** The ring's slots: a power of two, before the slack. */
	private static int capacity(Block[] stack) {
		return stack.length - REF_SLACK;
	}

	private Block[] grow(int classIndex) {
		Block[] old = this.stacks[classIndex];
		long[] oldStamps = this.stamps[classIndex];
		int capacity = capacity(old);
		Block[] grown = new Block[2 * capacity + REF_SLACK];
		long[] grownStamps = new long[2 * capacity + LONG_SLACK];
		int bottom = this.bottoms[PAD + classIndex];
		for (int i = 0; i < capacity; i++) {
			grown[i] = old[(bottom + i) & (capacity - 1)];
			grownStamps[i] = oldStamps[(bottom + i) & (capacity - 1)];
		}
		this.stacks[classIndex] = grown;
		this.stamps[classIndex] = grownStamps;
		this.bottoms[PAD + classIndex] = 0;
		return grown;
	}

}

/** The fields of a {@link Stripe}, between its paddings. */
abstract class StripeState extends Padding {

	volatile int lock;

	final int classes;

	/** The classes, smallest first, whose blocks may be cached. */
	final int cachedClasses;

	/** The pool's counts of the requests and returns made on this stripe. */
	final PoolCounters.Cell counts;

	final Block[][] stacks;

	/** The pool's clock when each cached block was pushed, slot for slot with {@link #stacks}. */
	final long[][] stamps;

	final int[] bottoms;

	final int[] sizes;

	/** Per class, the fewest blocks cached since the last sweep: those no request needed meanwhile. */
	final int[] lows;

	/** Returns on this stripe from one sweep to the next. */
	final int sweepReturns;

	/** Returns on this stripe before the next sweep. */
	int untilSweep;

	/** The last block returned of a class above the free lists', kept for a request of its exact size, or null. */
	Block last;

	/** The pool's clock when {@link #last} was returned. */
	long lastStamp;

	/** The size of the last block returned of a class above the free lists'. */
	long returnedSize;

	/** Whether the last request of a class above the free lists' asked for {@link #returnedSize}. */
	boolean repeating;

	/** Bytes of the blocks in all stacks. */
	long cachedBytes;

	/** Set by {@link Stripe#close} or {@link Stripe#closeLast}: the stripe takes no more blocks. */
	boolean closed;

	StripeState(int classes, int cachedClasses, PoolCounters.Cell counts, int sweepReturns, int pad) {
		this.classes = classes;
		this.cachedClasses = cachedClasses;
		this.sweepReturns = sweepReturns;
		this.untilSweep = sweepReturns;
		this.counts = counts;
		this.stacks = new Block[classes][];
		this.stamps = new long[classes][];
		this.bottoms = new int[pad + classes + pad];
		this.sizes = new int[pad + classes + pad];
		this.lows = new int[pad + classes + pad];
	}

}
