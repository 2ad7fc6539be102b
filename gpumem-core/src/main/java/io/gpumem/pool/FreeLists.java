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
 * striped so that request threads rarely meet on a lock; the stripes hold the tier of the last blocks of larger classes
 * too ({@link #lastBlocks}). A thread takes from the stripe of its own ({@link ThreadState}) first and from the others
 * before a miss, and a block goes back to the stripe of the thread that took it. Every request and every returned
 * block is counted on the stripe it meets, under the lock it takes anyway; the blocks a stripe's sweep finds idle
 * ({@link CachePolicy#sweepReturns}) are handed down ({@link Beneath}). Every cached block is in a stripe, so that a
 * trim from any thread reaches all of them; nothing is kept per thread.
 */
final class FreeLists implements Tier {

	private final Stripe[] stripes;

	private final int mask;

	/** How many classes, the smallest, keep their blocks in stacks. */
	private final int frontClasses;

	/** Per class kept in stacks, the size of its blocks: every such block has its class's span. */
	private final long[] blockBytes;

	private final Beneath beneath;

	private final LastBlocks lasts;

	FreeLists(SizeClassLadder ladder, CachePolicy policy, int stripes, PoolCounters counters, Beneath beneath) {
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
		this.beneath = beneath;
		this.lasts = new LastBlocks(this.stripes, beneath);
	}

	/** The tier of the last blocks of the classes above these lists', kept on the same stripes. */
	LastBlocks lastBlocks() {
		return this.lasts;
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
	 * Counts the return of a block of the free lists' classes or above the top class on stripe {@code home} (that of
	 * the thread that took it), and pushes it there, stamped, where {@code cache} allows (for a block of the free
	 * lists' classes only: {@link Route#keepsFirst}) and the lists are open, leaving it to {@link Tiers#giveBack}
	 * otherwise; those the stripe's sweep takes out if this return is its turn go down.
	 */
	@Override
	public boolean giveBack(Block block, int home, long stamp, boolean cache) {
		Stripe stripe = this.stripes[home & this.mask];
		boolean kept;
		List<Stripe.Idle> idle;
		stripe.lock();
		try {
			idle = stripe.countReturn(block.classIndex);
			assert !cache || (block.classIndex >= 0 && block.classIndex < this.frontClasses) : block.classIndex;
			kept = cache && stripe.push(block, stamp);
		}
		finally {
			stripe.unlock();
		}
		this.beneath.handDownSwept(idle, home);
		return kept;
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
	 * Hands the least recently cached blocks down ({@link Beneath#handDownOldest}): each pass finds the stamp below
	 * which the oldest blocks cover what is left, and takes them from the bottoms of the stacks.
	 */
	@Override
	public long release(long bytes, long cutoff) {
		return this.beneath.handDownOldest(bytes, cutoff, this::removeOldest);
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
	}

	@Override
	public void collectCached(ObjLongConsumer<Block> cached) {
		Stripe.eachLocked(this.stripes, (stripe) -> stripe.collect(cached));
	}

	/** Hands every cached block down, and caches nothing more. */
	@Override
	public void close() {
		List<Block> blocks = new ArrayList<>();
		Stripe.eachLocked(this.stripes, (stripe) -> stripe.close(blocks));
		this.beneath.handDownAll(blocks, 0, Long.MAX_VALUE);
	}

	/** Buffers cached in a class's stacks, with the exactness of {@link #cachedBytes()}. */
	long cachedBuffers(int classIndex) {
		return sum((stripe) -> stripe.cached(classIndex));
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
		Stripe.eachLocked(this.stripes, (stripe) -> stripe.collectStamps(stamps, cutoff));
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
			}
			finally {
				stripe.unlock();
			}
		}
		return removed;
	}

}
