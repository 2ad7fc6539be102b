package io.gpumem.pool;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * A pool's cached blocks, a stack per size class, striped so that request threads rarely meet on a
 * lock: a thread takes from the stripe of its own ({@link ThreadState}) first and from the others before
 * a miss, and a block goes back to the stripe of the thread that took it. Every cached block is in a stripe, so
 * that a trim from any thread reaches all of them; nothing is kept per thread.
 */
final class FreeLists {

	private final Stripe[] stripes;

	private final int mask;

	private final int classes;

	FreeLists(int classes, int stripes) {
		this.classes = classes;
		this.stripes = new Stripe[stripes];
		for (int i = 0; i < stripes; i++) {
			this.stripes[i] = new Stripe(classes);
		}
		this.mask = stripes - 1;
	}

	/**
	 * Counts a request of the class and takes a cached block of it, from stripe {@code home} (the calling
	 * thread's) first, then from the others; answers null when none is cached.
	 */
	Block take(int classIndex, long bytes, int home) {
		Stripe stripe = this.stripes[home & this.mask];
		Block block;
		stripe.lockHome();
		try {
			stripe.countRequest(classIndex, bytes);
			block = stripe.pop(classIndex);
		}
		finally {
			stripe.unlock();
		}
		return (block != null) ? block : steal(classIndex, home + 1, this.stripes.length - 1);
	}

	/** Counts a request of a class whose blocks are not cached here, on stripe {@code home}. */
	void countRequest(int classIndex, long bytes, int home) {
		Stripe stripe = this.stripes[home & this.mask];
		stripe.lockHome();
		try {
			stripe.countRequest(classIndex, bytes);
		}
		finally {
			stripe.unlock();
		}
	}

	/** Counts the size of a request above the top class, on stripe {@code home}. */
	void countSize(long bytes, int home) {
		Stripe stripe = this.stripes[home & this.mask];
		stripe.lockHome();
		try {
			stripe.countSize(bytes);
		}
		finally {
			stripe.unlock();
		}
	}

	/** The sizes of the requests counted on every stripe. */
	SizeHistogram requestSizes() {
		long[] counts = new long[SizeHistogram.BUCKETS];
		long[] bytes = new long[SizeHistogram.BUCKETS];
		for (Stripe stripe : this.stripes) {
			stripe.addSizes(counts, bytes);
		}
		return new SizeHistogram(counts, bytes);
	}

	/** Takes a cached block of the class from any stripe, {@code home} first, counting nothing; null when none is cached. */
	Block poll(int classIndex, int home) {
		return steal(classIndex, home, this.stripes.length);
	}

	/**
	 * Counts the return of a block to stripe {@code home} (that of the thread that took it), and caches it
	 * there, stamped, if {@code cache} and the lists are open.
	 * @return whether the block was cached
	 */
	boolean put(Block block, int home, long stamp, boolean cache) {
		Stripe stripe = this.stripes[home & this.mask];
		stripe.lock();
		try {
			stripe.countReturn(block.classIndex);
			return cache && stripe.push(block, stamp);
		}
		finally {
			stripe.unlock();
		}
	}

	/** Caches a block that was never lent (a warm-up), on stripe {@code index}; false once closed. */
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
	 * Removes about {@code bytes} of the least recently cached blocks: finds the stamp below which they
	 * lie, then takes blocks from the bottoms of the stacks up to it.
	 */
	List<Block> removeOldest(long bytes) {
		List<long[]> stamps = new ArrayList<>();
		for (Stripe stripe : this.stripes) {
			stripe.lock();
			try {
				stripe.collectStamps(stamps);
			}
			finally {
				stripe.unlock();
			}
		}
		stamps.sort((a, b) -> Long.compare(a[0], b[0]));
		long cutoff = Long.MIN_VALUE;
		long covered = 0;
		for (long[] entry : stamps) {
			if (covered >= bytes) {
				break;
			}
			cutoff = entry[0];
			covered += entry[1];
		}
		return removeStampedUpTo(cutoff, bytes);
	}

	/** Removes every block cached at or before {@code cutoff} on the pool's clock. */
	List<Block> removeIdle(long cutoff) {
		return removeStampedUpTo(cutoff, Long.MAX_VALUE);
	}

	/** Takes every cached block out, and caches nothing more: {@link #put} and {@link #add} answer false. */
	List<Block> close() {
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
		return blocks;
	}

	/** Bytes cached in all classes; a recent value unless no thread is acquiring or releasing. */
	long cachedBytes() {
		return sum(Stripe::cachedBytes);
	}

	/** Buffers cached in all classes, with the exactness of {@link #cachedBytes()}. */
	long cachedBuffers() {
		return sum(Stripe::cachedBuffers);
	}

	/** Buffers cached in a class, with the exactness of {@link #cachedBytes()}. */
	long cachedBuffers(int classIndex) {
		return sum((stripe) -> stripe.cached(classIndex));
	}

	/** Requests of every class counted so far. */
	long requests() {
		return sum(Stripe::requests);
	}

	private long sum(ToLongFunction<Stripe> figure) {
		long sum = 0;
		for (Stripe stripe : this.stripes) {
			sum += figure.applyAsLong(stripe);
		}
		return sum;
	}

	/** Adds, per class, the requests, returns and cached buffers of every stripe to the arrays given. */
	void addCounts(long[] requests, long[] returns, long[] cached) {
		for (Stripe stripe : this.stripes) {
			for (int c = 0; c < this.classes; c++) {
				requests[c] += stripe.requests(c);
				returns[c] += stripe.returns(c);
				cached[c] += stripe.cached(c);
			}
		}
	}

	/** Takes a cached block of the class from {@code count} stripes from {@code first} on, or answers null. */
	private Block steal(int classIndex, int first, int count) {
		for (int i = 0; i < count; i++) {
			int index = (first + i) & this.mask;
			Stripe stripe = this.stripes[index];
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

	private List<Block> removeStampedUpTo(long cutoff, long bytes) {
		long budget = bytes;
		List<Block> removed = new ArrayList<>();
		for (Stripe stripe : this.stripes) {
			stripe.lock();
			try {
				for (int c = 0; c < this.classes && budget > 0; c++) {
					while (budget > 0 && stripe.bottomStamp(c) <= cutoff) {
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
