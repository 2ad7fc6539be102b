package io.gpumem.pool.arena;

import java.util.function.ObjLongConsumer;

/**
 * One place a pool keeps memory ready to lend: the front free lists, the stripes' last blocks, the arena's free spans,
 * the large blocks, a shelf. The pool takes from its tiers in the order a request's route gives before it allocates,
 * gives a returned block to the tier its route names, and trims by asking each tier in turn to release what it keeps,
 * least recently used first. What a tier lets go goes to the one beneath it: the free lists', last blocks' and
 * shelves' blocks to the arena (or, above the top class, to the large blocks), the arena's whole free segments and the
 * large blocks to the allocator.
 */
public interface Tier {

	/**
	 * A block this tier keeps for a request of a class (or {@link Block#ABOVE_TOP_CLASS}) and of {@code size} bytes,
	 * taken out; {@code home} is the stripe of the requesting thread. Null when it keeps none that fits.
	 */
	Block take(int classIndex, long size, int home);

	/**
	 * Takes back a block returned at {@code stamp} on the pool's clock: keeps it where {@code cache} allows and
	 * the tier is open, and hands it to the tier beneath otherwise, but for the first tier a return reaches (the free
	 * lists, the last blocks), which leaves a block it does not keep to the pool's routes.
	 * @return whether this tier kept it
	 */
	boolean giveBack(Block block, int home, long stamp, boolean cache);

	/**
	 * Lets go of about {@code bytes} of what it keeps, least recently used first, only what it has kept since
	 * {@code cutoff} or before on the pool's clock.
	 * @return the bytes the allocator got back
	 */
	long release(long bytes, long cutoff);

	/** Bytes kept, ready to lend; a recent value while threads acquire and release. */
	long cachedBytes();

	/**
	 * Adds the blocks and bytes it keeps to {@code buffers} and {@code bytes}, per slot ({@link ReservedBlocks#slot}); by
	 * default nothing, as the arena's free spans belong to no class.
	 */
	default void addCached(long[] buffers, long[] bytes) {
	}

	/**
	 * Hands each block it keeps to {@code cached} with the stamp it was kept at, under its lock; the arena's free
	 * spans are no blocks.
	 */
	default void collectCached(ObjLongConsumer<Block> cached) {
	}

	/** Lets go of everything it keeps and keeps nothing more. */
	void close();

}
