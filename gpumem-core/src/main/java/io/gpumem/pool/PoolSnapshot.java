package io.gpumem.pool;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

import io.gpumem.pool.arena.Arena;
import io.gpumem.pool.arena.Block;
import io.gpumem.pool.arena.Span;
import io.gpumem.pool.arena.Tier;
import io.gpumem.pool.diagnostics.BufferRecording;
import io.gpumem.pool.diagnostics.PoolRecorder;

/**
 * Every segment a pool holds with its blocks in address order, and what each block is doing: the pool's memory
 * map, as PyTorch's memory snapshot draws it. Blocks above the top size class are segments of one block. The
 * segments' bytes add up to their blocks' bytes, and, while no thread acquires or releases, to
 * {@code reservedBytes}.
 *
 * @param pool the pool's name
 * @param reservedBytes the bytes the pool held from its allocator when the snapshot was taken
 * @param segments the segments, the arena's in the order allocated, then the blocks above the top class
 */
public record PoolSnapshot(String pool, long reservedBytes, List<SegmentView> segments) {

	public PoolSnapshot {
		segments = List.copyOf(segments);
	}

	/**
	 * The map of {@code arena}'s segments, then of each of the {@code large} blocks: a block is cached where one
	 * of the {@code tiers} keeps it, {@code pending} where closed after stream work, lent otherwise, acquired where
	 * one of the {@code lends} kept says.
	 */
	static PoolSnapshot of(String pool, long reservedBytes, Arena arena, LargeBlocks large, List<Tier> tiers,
			Map<Block, Upkeep.Pending> pending, Map<Object, PoolRecorder.Lend> lends) {
		long now = System.nanoTime();
		Map<Block, Long> cached = new IdentityHashMap<>();
		tiers.forEach((tier) -> tier.collectCached(cached::put));
		BiFunction<Block, Long, BlockView> view = (block, offset) -> view(block, offset, now, cached.get(block),
				pending.get(block), lends.get(block));
		List<SegmentView> segments = new ArrayList<>();
		for (Span.Piece piece : arena.pieces()) {
			List<BlockView> blocks = new ArrayList<>(piece.parts().size());
			for (Span.Part part : piece.parts()) {
				blocks.add((part.block() != null) ? view.apply(part.block(), part.offset())
						: new BlockView(part.offset(), part.bytes(), part.lent() ? State.LENT : State.FREE, -1, null,
								List.of()));
			}
			segments.add(new SegmentView(piece.bytes(), blocks));
		}
		large.blocks().forEach((block) -> segments.add(new SegmentView(block.size, List.of(view.apply(block, 0L)))));
		return new PoolSnapshot(pool, reservedBytes, segments);
	}

	/**
	 * A block at {@code offset} of its segment, cached at {@code cachedAt}, or waiting on stream work, or else lent,
	 * as seen {@code now}.
	 */
	private static BlockView view(Block block, long offset, long now, Long cachedAt, Upkeep.Pending waiting,
			PoolRecorder.Lend lend) {
		if (cachedAt != null) {
			return new BlockView(offset, block.size, State.CACHED, millis(now - cachedAt), null, List.of());
		}
		if (waiting != null) {
			return new BlockView(offset, block.size, State.PENDING, millis(now - waiting.closedNanos()),
					String.valueOf(waiting.stream()), List.of());
		}
		if (lend == null) {
			return new BlockView(offset, block.size, State.LENT, -1, null, List.of());
		}
		return new BlockView(offset, block.size, State.LENT, millis(now - lend.acquiredNanos()),
				(lend.stream() != null) ? lend.stream().toString() : null, lend.frames());
	}

	private static long millis(long nanos) {
		return Math.max(0, nanos / 1_000_000);
	}

	/**
	 * One allocation from the pool's allocator, or one run of granules mapped into an expandable segment's range.
	 *
	 * @param bytes its size
	 * @param blocks its blocks, by offset
	 */
	public record SegmentView(long bytes, List<BlockView> blocks) {

		public SegmentView {
			blocks = List.copyOf(blocks);
		}

	}

	/**
	 * One block of a segment.
	 *
	 * @param offset where it starts in its segment
	 * @param bytes its size
	 * @param state what it is doing
	 * @param ageMillis how long it has been doing it: since it was acquired (a recorded lent block), closed (a
	 * pending one) or cached (as the pool's recency clock tells, which moves at least once a second); -1 where not
	 * known (free spans, lent blocks not recorded)
	 * @param stream for a pending block, the stream whose work it waits for; for a recorded lent block, the
	 * stream it was acquired on, if any; null otherwise
	 * @param acquiredAt for a lent block whose frames were recorded ({@link BufferRecording}), where it was
	 * acquired; empty otherwise
	 */
	public record BlockView(long offset, long bytes, State state, long ageMillis, String stream,
			List<String> acquiredAt) {

		public BlockView {
			acquiredAt = List.copyOf(acquiredAt);
		}

	}

	/** What a block is doing. */
	public enum State {

		/** Lent to a buffer. */
		LENT,

		/** Closed after stream work that has not completed: lent until it has. */
		PENDING,

		/** Cached, ready to lend: in a free list, on a shelf, or above the top class. */
		CACHED,

		/** Free in the arena, to be cut for any class. */
		FREE

	}

}
