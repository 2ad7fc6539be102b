package io.gpumem.pool;

import java.util.List;

import io.gpumem.pool.arena.Block;

/**
 * Where a tier above the arena hands the blocks it lets go of: to the tier beneath each, as the pool's routes
 * ({@link Tiers}) say, so that no tier above decides where a block goes.
 */
interface Beneath {

	/** Hands down one block let go of on stripe {@code home}, free since {@code stamp}. */
	void handDown(Block block, int home, long stamp);

	/**
	 * Hands down blocks let go of, free since {@code cutoff}; the arena then gives back what is free until it covers
	 * {@code bytes}.
	 * @return the bytes the allocator got back
	 */
	long handDownAll(List<Block> blocks, long bytes, long cutoff);

	/**
	 * Hands down the blocks {@code oldest} takes out, the least recently kept first, in passes (four at most) until the
	 * arena has given back {@code bytes} of whole segments: a block freed beside one still lent frees no segment, so
	 * each pass takes out more for what is left.
	 * @return the bytes the allocator got back
	 */
	default long handDownOldest(long bytes, long cutoff, Oldest oldest) {
		long released = 0;
		for (int pass = 0; pass < 4 && released < bytes; pass++) {
			List<Block> blocks = oldest.remove(bytes - released, cutoff);
			if (blocks.isEmpty()) {
				break;
			}
			released += handDownAll(blocks, bytes - released, cutoff);
		}
		return released;
	}

	/** Hands down the blocks a stripe's sweep took out ({@link Stripe#countReturn}), each free since it was pushed. */
	default void handDownSwept(List<Stripe.Idle> swept, int home) {
		if (swept != null) {
			swept.forEach((idle) -> handDown(idle.block(), home, idle.stamp()));
		}
	}

	/** Takes out of a tier about {@code bytes} of its least recently kept blocks kept at {@code cutoff} or before. */
	@FunctionalInterface
	interface Oldest {

		List<Block> remove(long bytes, long cutoff);

	}

}
