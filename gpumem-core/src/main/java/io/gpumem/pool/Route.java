package io.gpumem.pool;

import java.util.List;

import io.gpumem.pool.arena.Block;
import io.gpumem.pool.arena.Tier;

/**
 * The way a request of one size class (or above the top class) goes through a pool's tiers, decided once when the
 * pool is made, as Netty's size-class tables and PyTorch's {@code get_pool} decide it: where its hit looks, the size
 * it asks of the tiers, the tiers a miss looks in, in order, the tier a returned block reaches first, and the tier
 * whose memory its blocks are.
 */
final class Route {

	/** Where the hit path looks. */
	enum Hit {

		/** The class's stack on the thread's stripe, then on the others ({@link FreeLists}). */
		STACK,

		/** The stripe's last block, where it has the request's size ({@link LastBlocks}). */
		LAST,

		/** Nowhere: the request is only counted. */
		NONE

	}

	/** One look for a block on a miss, in one tier. */
	@FunctionalInterface
	interface Look {

		/**
		 * A block of {@code size} bytes for stripe {@code home}, or null; {@code returned}: whether blocks have come
		 * back since the last miss.
		 */
		Block take(long size, int home, boolean returned);

	}

	final Hit hit;

	/** The bytes of each of the class's blocks where the free lists keep them (all of one size), else 0. */
	final long classBytes;

	/** The looks of a miss, in order, before the allocator is asked. */
	final List<Look> misses;

	/** The tier a returned block reaches first, which counts it and keeps it where it may ({@link #keepsFirst}). */
	final Tier first;

	/** The tier whose memory the blocks are: it cuts or allocates them, and takes back those no tier above keeps. */
	final Tier owner;

	Route(Hit hit, long classBytes, List<Look> misses, Tier first, Tier owner) {
		this.hit = hit;
		this.classBytes = classBytes;
		this.misses = misses;
		this.first = first;
		this.owner = owner;
	}

	/** Whether the tier a returned block reaches first may keep it: where the hit looks in it. */
	boolean keepsFirst() {
		return this.hit != Hit.NONE;
	}

	/** Whether the free lists keep the class's blocks in stacks. */
	boolean front() {
		return this.hit == Hit.STACK;
	}

	/**
	 * The bytes a request of {@code bytes} asks of the tiers: its class's where the free lists keep it, else the
	 * request's.
	 */
	long blockSize(long bytes) {
		return (this.classBytes != 0) ? this.classBytes : bytes;
	}

	/** A block from the looks of a miss, in order; null when the allocator must be asked. */
	Block miss(long size, int home, boolean returned) {
		for (Look look : this.misses) {
			Block block = look.take(size, home, returned);
			if (block != null) {
				return block;
			}
		}
		return null;
	}

}
