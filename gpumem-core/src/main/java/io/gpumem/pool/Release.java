package io.gpumem.pool;

/** Takes a block back into a pool on its user's behalf, onto stripe {@code stripe} of the free lists. */
@FunctionalInterface
interface Release {

	void release(Block block, int stripe);

}
