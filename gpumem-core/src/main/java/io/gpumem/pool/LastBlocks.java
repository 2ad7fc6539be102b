package io.gpumem.pool;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.ObjLongConsumer;

import io.gpumem.pool.arena.Block;
import io.gpumem.pool.arena.ReservedBlocks;
import io.gpumem.pool.arena.Tier;

/**
 * The tier of the stripes' last blocks: on each stripe whose requests repeat their sizes, the last block returned of a
 * class above the free lists', kept for the next request of its exact size on that stripe without the arena's lock.
 * It lives in the stripes of the free lists, under their locks, and counts the requests and returns it meets there
 * as they do.
 */
final class LastBlocks implements Tier {

	private final Stripe[] stripes;

	private final int mask;

	private final Beneath beneath;

	LastBlocks(Stripe[] stripes, Beneath beneath) {
		this.stripes = stripes;
		this.mask = stripes.length - 1;
		this.beneath = beneath;
	}

	/**
	 * The hit path: counts a request of {@code bytes} of the class on stripe {@code home} and takes the stripe's last
	 * block where it is of the class and spans exactly {@code size}; null otherwise, where a last block of another size
	 * goes down to the arena, so that it may serve this request.
	 */
	Block hit(int classIndex, long bytes, long size, int home) {
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
		this.beneath.handDown(last, home, stamp);
		return null;
	}

	/** Takes nothing for a miss: a last block serves its stripe's hit path only. */
	@Override
	public Block take(int classIndex, long size, int home) {
		return null;
	}

	/**
	 * Counts the return of a block on stripe {@code home} and keeps it there as the last, stamped, where {@code cache}
	 * allows and the stripe's requests repeat ({@link Stripe#repeats}); the block it replaces, and those the stripe's
	 * sweep takes out if this return is its turn, go down.
	 */
	@Override
	public boolean giveBack(Block block, int home, long stamp, boolean cache) {
		Stripe stripe = this.stripes[home & this.mask];
		boolean kept = false;
		Block replaced = null;
		long replacedStamp = 0;
		List<Stripe.Idle> idle;
		stripe.lock();
		try {
			idle = stripe.countReturn(block.classIndex);
			if (cache && stripe.repeats(block.size)) {
				replacedStamp = stripe.lastStamp();
				replaced = stripe.keepLast(block, stamp);
				kept = replaced != block;
			}
		}
		finally {
			stripe.unlock();
		}
		if (kept && replaced != null) {
			this.beneath.handDown(replaced, home, replacedStamp);
		}
		this.beneath.handDownSwept(idle, home);
		return kept;
	}

	/**
	 * Hands every stripe's last block down, so that the spans they hold may serve a request of another size.
	 * @return whether there was any
	 */
	boolean handDownEvery() {
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
				this.beneath.handDown(kept, i, stamp);
				any = true;
			}
		}
		return any;
	}

	/**
	 * Hands down the last blocks kept at {@code cutoff} or before, the least recently kept first
	 * ({@link Beneath#handDownOldest}).
	 */
	@Override
	public long release(long bytes, long cutoff) {
		return this.beneath.handDownOldest(bytes, cutoff, this::removeOldest);
	}

	/** Takes out the oldest last blocks kept at {@code cutoff} or before, until they cover {@code bytes}. */
	private List<Block> removeOldest(long bytes, long cutoff) {
		List<Stamped> candidates = new ArrayList<>();
		for (Stripe stripe : this.stripes) {
			long stamp = stripe.lastStamp();
			if (stamp <= cutoff) {
				candidates.add(new Stamped(stripe, stamp));
			}
		}
		candidates.sort(Comparator.comparingLong(Stamped::stamp));
		List<Block> removed = new ArrayList<>();
		long covered = 0;
		for (Stamped candidate : candidates) {
			if (covered >= bytes) {
				break;
			}
			Stripe stripe = candidate.stripe();
			stripe.lock();
			try {
				if (stripe.lastStamp() <= cutoff) {
					Block kept = stripe.takeLast();
					removed.add(kept);
					covered += kept.size;
				}
			}
			finally {
				stripe.unlock();
			}
		}
		return removed;
	}

	@Override
	public long cachedBytes() {
		long cached = 0;
		for (Stripe stripe : this.stripes) {
			Block last = stripe.last();
			cached += (last != null) ? last.size : 0;
		}
		return cached;
	}

	@Override
	public void addCached(long[] buffers, long[] bytes) {
		for (Stripe stripe : this.stripes) {
			Block last = stripe.last();
			if (last != null) {
				int slot = ReservedBlocks.slot(last.classIndex, buffers.length - 1);
				buffers[slot]++;
				bytes[slot] += last.size;
			}
		}
	}

	@Override
	public void collectCached(ObjLongConsumer<Block> cached) {
		Stripe.eachLocked(this.stripes, (stripe) -> stripe.collectLast(cached));
	}

	/** Hands every last block down, and keeps none more. */
	@Override
	public void close() {
		List<Block> blocks = new ArrayList<>();
		Stripe.eachLocked(this.stripes, (stripe) -> stripe.closeLast(blocks));
		this.beneath.handDownAll(blocks, 0, Long.MAX_VALUE);
	}

	/** A stripe whose last block was kept at {@code stamp}, when a release looked. */
	private record Stamped(Stripe stripe, long stamp) {
	}

}
