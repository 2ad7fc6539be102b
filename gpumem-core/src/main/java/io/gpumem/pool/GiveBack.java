package io.gpumem.pool;

import io.gpumem.pool.arena.Block;
import io.gpumem.pool.diagnostics.PoolRecorder;

/**
 * Takes a block back into a pool on its user's behalf, onto stripe {@code stripe} of the free lists, and records the
 * close of its buffer's {@code lend} (null where not recorded).
 */
@FunctionalInterface
interface GiveBack {

	void giveBack(Block block, int stripe, PoolRecorder.Lend lend);

}
