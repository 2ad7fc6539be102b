package io.gpumem.pool.arena;

import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;

import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;

/**
 * The arena behind a pool's classes, over expandable segments as shards that the requesting thread's stripe picks,
 * each with its own lock, ranges and spans, so that requests above the free lists do not queue on one lock (RMM's
 * {@code arena_memory_resource}): a request takes a fit any shard holds mapped before its own shard maps more (up to
 * {@value #MAX_FOREIGN_TAKES} in a row), one that must map does so in the shard where it maps the fewest granules, its
 * own on a tie; free granules stay mapped until a trim. The blocks the free lists keep, few and rarely asked for once
 * cached, are all cut from the first shard, so that only one shard's range holds a partly used granule of them. Over
 * fixed segments, which go back only whole, one shard.
 */
public final class Arenas implements Tier {

	/** The most shards: each holds at least a partly used granule of its own at the end of its ranges. */
	public static final int MAX_SHARDS = 8;

	/**
	 * The most blocks in a row a thread takes from other shards' memory before its own shard grows instead. Taking
	 * another shard's fit saves mapping more, but a thread that keeps finding one (the free half of a granule
	 * another thread cycles through) would share that shard's lock for as long as the two run.
	 */
	public static final int MAX_FOREIGN_TAKES = 64;

	/** Ints on either side of a thread's count of foreign takes: 128 bytes, two cache lines. */
	private static final int PAD = 32;

	/**
	 * Per thread, at {@link #PAD}, the blocks in a row it took from shards not its own, counted over all pools: a
	 * thread on two pools' arenas may grow its own shard sooner or later than one on one. Padded on both sides, so
	 * that two threads' counts never share a cache line, wherever the collector moves them.
	 */
	private static final ThreadLocal<int[]> FOREIGN_TAKES = ThreadLocal.withInitial(() -> new int[2 * PAD + 1]);

	private final Arena[] shards;

	/** Whether the free lists keep a class's blocks: those are cut from the first shard. */
	private final IntPredicate keeps;

	/** The bytes every shard has taken out to unmap and not yet unmapped. */
	private final GranuleMapping.UnderWay unmaps = new GranuleMapping.UnderWay();

	/**
	 * An arena of one shard per stripe, at most {@value #MAX_SHARDS}, over expandable segments; of one otherwise.
	 * {@code keeps}: whether the free lists keep a class's blocks.
	 */
	public Arenas(MemoryAllocator allocator, long segmentStep, int stripes, ArenaCounters counters, IntPredicate keeps) {
		this.keeps = keeps;
		int count = (allocator.addressSpace() != null) ? Math.min(Integer.highestOneBit(stripes), MAX_SHARDS) : 1;
		this.shards = new Arena[count];
		for (int i = 0; i < count; i++) {
			this.shards[i] = new Arena(allocator, segmentStep, counters, keeps, this.unmaps);
		}
	}

	/** Whether segments are ranges whose granules are mapped as needed. */
	public boolean expandable() {
		return this.shards[0].expandable();
	}

	/**
	 * A block cut from what a shard holds, stripe {@code home}'s first; null when none has a fit, or when the
	 * calling thread's last {@value #MAX_FOREIGN_TAKES} takes from the arena all came from other shards: it then
	 * grows its own ({@link #allocate}). A class the free lists keep, from the first shard only.
	 */
	@Override
	public Block take(int classIndex, long size, int home) {
		Block block = shard(stripe(classIndex, home)).take(classIndex, size, home);
		if (this.shards.length == 1 || this.keeps.test(classIndex)) {
			return block;
		}
		int[] foreignTakes = FOREIGN_TAKES.get();
		if (block != null || foreignTakes[PAD] >= MAX_FOREIGN_TAKES) {
			foreignTakes[PAD] = 0;
			return block;
		}
		block = takeFromOthers(classIndex, size, home);
		if (block != null) {
			foreignTakes[PAD]++;
		}
		return block;
	}

	/**
	 * A block from the shard where it maps the fewest granules ({@link FreeSpans#mapping}), stripe {@code home}'s on
	 * a tie (the first, for a class the free lists keep; a fit another shard holds mapped only through {@link #take}),
	 * mapping or allocating as needed. Where the allocator refuses, a fit another shard holds still serves.
	 * @throws GpuOutOfMemoryException if the allocator refuses and no shard has a fit
	 */
	public Block allocate(int classIndex, long size, int home) {
		int own = stripe(classIndex, home);
		long mapping = (this.shards.length > 1) ? shard(own).mapping(classIndex, size) : 0;
		for (int i = 1; i < this.shards.length && mapping > 0 && !this.keeps.test(classIndex); i++) {
			long there = shard(home + i).mapping(classIndex, size);
			if (there > 0 && there < mapping) {
				own = home + i;
				mapping = there;
			}
		}
		try {
			return shard(own).allocate(classIndex, size);
		}
		catch (GpuOutOfMemoryException ex) {
			Block block = takeFromOthers(classIndex, size, own);
			if (block == null) {
				throw ex;
			}
			return block;
		}
	}

	/** A block cut from what the shards other than stripe {@code home}'s hold; null when none has a fit. */
	private Block takeFromOthers(int classIndex, long size, int home) {
		for (int i = 1; i < this.shards.length; i++) {
			Block block = shard(home + i).take(classIndex, size, home);
			if (block != null) {
				return block;
			}
		}
		return null;
	}

	/**
	 * Makes room for {@code count} free spans of {@code size} bytes in the first shard, a warm-up: new fixed
	 * segments, or granules mapped by lending the spans and freeing them at {@code stamp}.
	 * @throws GpuOutOfMemoryException if the allocator refuses (what was made before stays)
	 */
	public void grow(long size, int count, long stamp) {
		Arena first = this.shards[0];
		if (!expandable()) {
			first.grow(size, count);
			return;
		}
		List<Block> blocks = new ArrayList<>();
		try {
			for (int i = 0; i < count; i++) {
				blocks.add(first.allocate(Block.ABOVE_TOP_CLASS, size));
			}
		}
		finally {
			blocks.forEach((block) -> first.giveBack(block, -1, stamp, false));
		}
	}

	/** Frees the block's span in the shard it was cut from. */
	@Override
	public boolean giveBack(Block block, int home, long stamp, boolean cache) {
		return block.span.segment.arena.giveBack(block, home, stamp, cache);
	}

	/** Takes back the blocks a tier above lets go of, free since {@code cutoff}, then releases as {@link #release}. */
	public long giveBackAll(List<Block> blocks, long bytes, long cutoff) {
		blocks.forEach((block) -> giveBack(block, -1, cutoff, false));
		return release(bytes, cutoff);
	}

	/** Gives memory free since {@code cutoff} back to the allocator, shard by shard, until it covers {@code bytes}. */
	@Override
	public long release(long bytes, long cutoff) {
		long released = 0;
		for (Arena shard : this.shards) {
			released += shard.release(Math.max(0, bytes - released), cutoff);
		}
		return released;
	}

	@Override
	public long cachedBytes() {
		long cached = 0;
		for (Arena shard : this.shards) {
			cached += shard.cachedBytes();
		}
		return cached;
	}

	@Override
	public void close() {
		for (Arena shard : this.shards) {
			shard.close();
		}
	}

	/** Bytes held of the device by every shard. */
	public long segmentBytes() {
		long held = 0;
		for (Arena shard : this.shards) {
			held += shard.segmentBytes();
		}
		return held;
	}

	/** The memory held in pieces, shard by shard, each in the order made. */
	public List<Span.Piece> pieces() {
		List<Span.Piece> pieces = new ArrayList<>();
		for (Arena shard : this.shards) {
			pieces.addAll(shard.pieces());
		}
		return pieces;
	}

	/** The addresses reserved for expandable segments by every shard; 0 for segments that are allocations. */
	public long addressBytes() {
		long addresses = 0;
		for (Arena shard : this.shards) {
			addresses += shard.addressBytes();
		}
		return addresses;
	}

	/** Blocks of a class the free lists keep, lent or kept: all are cut from the first shard. */
	public long keptBuffers(int classIndex) {
		return this.shards[0].reserved.buffers(classIndex);
	}

	/** The stripe whose shard a class's blocks are cut from: the first for a class the free lists keep. */
	private int stripe(int classIndex, int home) {
		return this.keeps.test(classIndex) ? 0 : home;
	}

	private Arena shard(int stripe) {
		return this.shards[stripe & (this.shards.length - 1)];
	}

}
