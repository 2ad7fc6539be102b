package io.gpumem.pool.arena;

import java.util.ArrayList;
import java.util.List;

/** An arena's counts of one class, as a pool of one class sums them. */
final class Counts implements ArenaCounters {

	private final List<ReservedBlocks> reserved = new ArrayList<>();

	@Override
	public synchronized ReservedBlocks reserved() {
		ReservedBlocks blocks = new ReservedBlocks(1);
		this.reserved.add(blocks);
		return blocks;
	}

	@Override
	public void countUse(int classIndex, boolean allocated) {
	}

	@Override
	public void countTrimmed(long bytes) {
	}

	/** Bytes of the blocks of a class booked by every arena of these counts. */
	synchronized long reservedBytes(int classIndex) {
		return this.reserved.stream().mapToLong((blocks) -> blocks.bytes(ReservedBlocks.slot(classIndex, 1))).sum();
	}

}
