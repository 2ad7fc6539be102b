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

	/** Hands down the blocks a stripe's sweep took out ({@link Stripe#countReturn}), each free since it was pushed. */
	default void handDownSwept(List<Stripe.Idle> swept, int home) {
		if (swept != null) {
			swept.forEach((idle) -> handDown(idle.block(), home, idle.stamp()));
		}
	}

}
