package io.gpumem.pool;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ObjLongConsumer;
import java.util.function.ToLongFunction;

import io.gpumem.pool.arena.Arena;
import io.gpumem.pool.arena.Block;
import io.gpumem.pool.arena.Tier;

/**
 * The front tier: a pool's cached blocks of the classes up to {@link PoolConfig#FREE_LISTS_LIMIT}, a stack per class,
 * and on each stripe whose requests repeat their sizes the last block returned of a larger class, for the next request
 * of its exact size without the arena's lock; striped so that request threads rarely meet on a lock. A thread takes
 * from the stripe of its own ({@link ThreadState}) first and from the others before a miss, and a block goes back to
 * the stripe of the thread that took it. Every request and every returned block is counted here, on the stripe it
 * meets, under the lock it takes anyway; a block the front does not keep goes on to the arena, or above the top class
 * to the large blocks, and so do those a stripe's sweep finds idle ({@link CachePolicy#sweepReturns}). Every cached
 * block is in a stripe, so that a trim from any thread reaches all of them; nothing is kept per thread.
 */
final class FreeLists implements Tier {

	private final Stripe[] stripes;

	private final int mask;

	/** How many classes, the smallest, keep their blocks in stacks; a larger class's last returned is kept alone. */
	private final int frontClasses;

	/** Per class kept in stacks, the size of its blocks: every such block has its class's span. */
	private final long[] blockBytes;

	private final Arena arena;

	private final LargeBlocks large;

	FreeLists(SizeClassLadder ladder, CachePolicy policy, int stripes, PoolCounters counters, Arena arena,
			LargeBlocks large) {
		int classes = ladder.count();
		this.frontClasses = policy.frontClasses();
		this.blockBytes = new long[this.frontClasses];
		for (int c = 0; c < this.frontClasses; c++) {
			this.blockBytes[c] = Arena.spanSize(ladder.size(c));
		}
		this.stripes = new Stripe[stripes];
		int sweepReturns = CachePolicy.sweepReturns(stripes);
		for (int i = 0; i < stripes; i++) {
			this.stripes[i] = new Stripe(classes, this.frontClasses, counters.cell(i), sweepReturns);
		}
		this.mask = stripes - 1;
		this.arena = arena;
		this.large = large;
	}

	/**
	 * The hit path: counts a request of {@code bytes} of the class and takes a cached block of it, from stripe
	 * {@code home} (the calling thread's) first, then from the others; null when none is cached.
	 */
	Block hit(int classIndex, long bytes, int home) {
		Stripe stripe = this.stripes[home & this.mask];
		Block block;
		stripe.lockHome();
		try {
			stripe.counts.request(classIndex, bytes);
			block = stripe.pop(classIndex);
		}
		finally {
			stripe.unlock();
		}
		return (block != null) ? block : steal(classIndex, home + 1, this.stripes.length - 1);
	}

	/**
	 * The hit path above the free lists' classes: counts a request of {@code bytes} of the class on stripe {@code home}
	 * and takes the stripe's last returned block ({@link Stripe#keepLast}) where it is of the class and spans exactly
	 * {@code size}; null otherwise, where a last block of another size goes back to the arena, so that it may serve
	 * this request.
	 */
	Block hitLast(int classIndex, long bytes, long size, int home) {
		Stripe stripe = this.stripes[home & this.mask];
		Block last;
		long stamp;
		stripe.lockHome();
		try {
			stripe.counts.request(classIndex, bytes);
			stripe.requested(size);
			stamp = stripe.lastStamp();
			last = stripe.takeLast();
		}
		finally {
			stripe.unlock();
		}
		if (last == null || (last.classIndex == classIndex && last.size == size)) {
			return last;
		}
		this.arena.giveBack(last, home, stamp, false);
		return null;
	}

	/**
	 * Counts a request of a class not cached here, or above the top class ({@link Block#ABOVE_TOP_CLASS}), on stripe
	 * {@code home}.
	 */
	void countRequest(int classIndex, long bytes, int home) {
		Stripe stripe = this.stripes[home & this.mask];
		stripe.lockHome();
		try {
			stripe.counts.request(classIndex, bytes);
		}
		finally {
			stripe.unlock();
		}
	}

	/** A cached block of the class from any stripe, {@code home} first, counting nothing; null when none is. */
	@Override
	public Block take(int classIndex, long size, int home) {
		return steal(classIndex, home, this.stripes.length);
	}

	/**
	 * Counts the return of any block on stripe {@code home} (that of the thread that took it), and caches a
	 * class's block there, stamped, where {@code cache} allows and the lists are open, as the last returned above
	 * the free lists' classes where it is larger and the stripe's requests repeat ({@link Stripe#repeats}), leaving
	 * any other to {@link Tiers#giveBack}; the block it replaces there, and those the stripe's sweep takes out if this
	 * return is its turn, go to the arena.
	 */
	@Override
	public boolean giveBack(Block block, int home, long stamp, boolean cache) {
		Stripe stripe = this.stripes[home & this.mask];
		boolean kept;
		Block replaced = null;
		long replacedStamp = 0;
		List<Stripe.Idle> idle;
		stripe.lock();
		try {
			stripe.counts.returned(block.classIndex);
			if (!cache || block.classIndex == Block.ABOVE_TOP_CLASS) {
				kept = false;
			}
			else if (block.classIndex < this.frontClasses) {
				kept = stripe.push(block, stamp);
			}
			else if (stripe.repeats(block.size)) {
				replacedStamp = stripe.lastStamp();
				replaced = stripe.keepLast(block, stamp);
				kept = replaced != block;
			}
			else {
				kept = false;
			}
			idle = stripe.returned();
		}
		finally {
			stripe.unlock();
		}
		if (kept && replaced != null) {
			this.arena.giveBack(replaced, home, replacedStamp, false);
		}
		if (idle != null) {
			idle.forEach((swept) -> this.arena.giveBack(swept.block(), home, swept.stamp(), false));
		}
		return kept;
	}

	/**
	 * Gives every stripe's last block above the free lists' classes ({@link Stripe#keepLast}) back to the arena.
	 * @return whether there was any
	 */
	boolean giveBackLast() {
		boolean any = false;
		for (int i = 0; i < this.stripes.length; i++) {
			Stripe stripe = this.stripes[i];
			if (stripe.last() == null) {
				continue;
			}
			Block kept;
			long stamp;
			stripe.lock();
			try {
				stamp = stripe.lastStamp();
				kept = stripe.takeLast();
			}
			finally {
				stripe.unlock();
			}
			if (kept != null) {
				this.arena.giveBack(kept, i, stamp, false);
				any = true;
			}
		}
		return any;
	}

	/** Counts the return of a block that does not come back through the free lists, on stripe {@code home}. */
	void countReturn(int classIndex, int home) {
		Stripe stripe = this.stripes[home & this.mask];
		stripe.lock();
		try {
			stripe.counts.returned(classIndex);
		}
		finally {
			stripe.unlock();
		}
	}

	/** Caches a block that was never lent (a warm-up) on stripe {@code index}; false once closed. */
	boolean add(Block block, long stamp, int index) {
		Stripe stripe = this.stripes[index & this.mask];
		stripe.lock();
		try {
			return stripe.push(block, stamp);
		}
		finally {
			stripe.unlock();
		}
	}

	/**
	 * Gives the least recently cached blocks back to the arena, in passes until the arena has given back
	 * {@code bytes} of whole segments (a block freed beside one still lent frees no segment): each pass finds
	 * the stamp below which the oldest blocks cover what is left, and takes them from the bottoms of the stacks and
	 * the stripes' last blocks.
	 */
	@Override
	public long release(long bytes, long cutoff) {
		long released = 0;
		for (int pass = 0; pass < 4 && released < bytes; pass++) {
			List<Block> oldest = removeOldest(bytes - released, cutoff);
			if (oldest.isEmpty()) {
				break;
			}
			released += this.arena.giveBackAll(oldest, bytes - released, cutoff);
		}
		return released;
	}

	/** Bytes cached in all classes; a recent value unless no thread is acquiring or releasing. */
	@Override
	public long cachedBytes() {
		return sum(Stripe::cachedBytes);
	}

	@Override
	public void addCached(long[] buffers, long[] bytes) {
		for (int c = 0; c < this.frontClasses; c++) {
			long cached = cachedBuffers(c);
			buffers[c] += cached;
			bytes[c] += cached * this.blockBytes[c];
		}
		for (Stripe stripe : this.stripes) {
			Block last = stripe.last();
			if (last != null) {
				buffers[last.classIndex]++;
				bytes[last.classIndex] += last.size;
			}
		}
	}

	@Override
	public void collectCached(ObjLongConsumer<Block> cached) {
		for (Stripe stripe : this.stripes) {
			stripe.lock();
			try {
				stripe.collect(cached);
			}
			finally {
				stripe.unlock();
			}
		}
	}

	/** Takes every cached block out to the arena, and caches nothing more. */
	@Override
	public void close() {
		List<Block> blocks = new ArrayList<>();
		for (Stripe stripe : this.stripes) {
			stripe.lock();
			try {
				stripe.close(blocks);
			}
			finally {
				stripe.unlock();
			}
		}
		this.arena.giveBackAll(blocks, 0, Long.MAX_VALUE);
	}

	/** Buffers cached in a class's stacks, with the exactness of {@link #cachedBytes()}. */
	long cachedBuffers(int classIndex) {
		return sum((stripe) -> stripe.cached(classIndex));
	}

	/** The tier a block goes to when the free lists do not keep it: the arena for a span, else the large blocks. */
	Tier beneath(Block block) {
		return (block.span != null) ? this.arena : this.large;
	}

	private long sum(ToLongFunction<Stripe> figure) {
		long sum = 0;
		for (Stripe stripe : this.stripes) {
			sum += figure.applyAsLong(stripe);
		}
		return sum;
	}

	/** Takes a cached block of the class from {@code count} stripes from {@code first} on, or answers null. */
	private Block steal(int classIndex, int first, int count) {
		for (int i = 0; i < count; i++) {
			Stripe stripe = this.stripes[(first + i) & this.mask];
			Block block;
			stripe.lock();
			try {
				block = stripe.pop(classIndex);
			}
			finally {
				stripe.unlock();
			}
			if (block != null) {
				return block;
			}
		}
		return null;
	}

	/** Removes about {@code bytes} of the least recently cached blocks cached at {@code cutoff} or before. */
	private List<Block> removeOldest(long bytes, long cutoff) {
		List<long[]> stamps = new ArrayList<>();
		for (Stripe stripe : this.stripes) {
			stripe.lock();
			try {
				stripe.collectStamps(stamps, cutoff);
			}
			finally {
				stripe.unlock();
			}
		}
		stamps.sort((a, b) -> Long.compare(a[0], b[0]));
		long last = Long.MIN_VALUE;
		long covered = 0;
		for (long[] entry : stamps) {
			if (covered >= bytes) {
				break;
			}
			last = entry[0];
			covered += entry[1];
		}
		long budget = bytes;
		List<Block> removed = new ArrayList<>();
		for (Stripe stripe : this.stripes) {
			stripe.lock();
			try {
				for (int c = 0; c < this.frontClasses && budget > 0; c++) {
					while (budget > 0 && stripe.bottomStamp(c) <= last) {
						Block bottom = stripe.removeBottom(c);
						removed.add(bottom);
						budget -= bottom.size;
					}
				}
				if (budget > 0 && stripe.lastStamp() <= last) {
					Block kept = stripe.takeLast();
					removed.add(kept);
					budget -= kept.size;
				}
			}
			finally {
				stripe.unlock();
			}
		}
		return removed;
	}

}
