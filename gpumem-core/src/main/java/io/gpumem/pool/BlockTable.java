package io.gpumem.pool;

import java.util.Arrays;

/**
 * Every block a pool holds from its allocator, by a small integer id. Thread caches keep ids instead
 * of references: storing an {@code int} into an array needs no garbage-collector write barrier, while
 * storing a reference into a long-lived array costs G1 a memory fence on the hit path. Holding the
 * blocks here also keeps lent blocks, and so their leak watchers, reachable.
 */
final class BlockTable {

	private volatile Block[] blocks = new Block[64];

	private int[] freeIds = new int[16];

	private int freeCount;

	private int nextId;

	/** The block of an id handed out by {@link #add(Block)} and not yet removed. */
	Block get(int id) {
		return this.blocks[id];
	}

	/** Enters a block and answers its id. */
	synchronized int add(Block block) {
		int id = (this.freeCount > 0) ? this.freeIds[--this.freeCount] : this.nextId++;
		Block[] current = this.blocks;
		if (id == current.length) {
			current = Arrays.copyOf(current, 2 * current.length);
		}
		current[id] = block;
		this.blocks = current;
		return id;
	}

	/** Removes the block of an id, whose id may then be handed out again. */
	synchronized void remove(int id) {
		this.blocks[id] = null;
		if (this.freeCount == this.freeIds.length) {
			this.freeIds = Arrays.copyOf(this.freeIds, 2 * this.freeIds.length);
		}
		this.freeIds[this.freeCount++] = id;
	}

}
