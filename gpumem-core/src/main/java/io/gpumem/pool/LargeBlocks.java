package io.gpumem.pool;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ObjLongConsumer;

import io.gpumem.memory.MemoryAllocator;
import io.gpumem.pool.arena.Block;
import io.gpumem.pool.arena.ReservedBlocks;
import io.gpumem.pool.arena.Tier;

/**
 * The tier above the top size class: blocks each allocated to the exact size of the request that missed. A
 * request takes the smallest cached block that fits it, if that block is at most {@link #REUSE_MARGIN} larger
 * (PyTorch's bound for blocks it does not split), so that one reuse wastes at most that much. Large requests
 * are rare and slow on a miss; one lock guards the cached blocks.
 */
final class LargeBlocks implements Tier {

	/** A request takes a cached block at most this many bytes larger than it. */
	static final long REUSE_MARGIN = 20L << 20;

	private final MemoryAllocator allocator;

	private final PoolCounters counters;

	/** The blocks held, lent or cached, counted under the lock. */
	private final ReservedBlocks reserved;

	/**
	 * Every block, lent or cached: this keeps lent blocks, and their leak watchers, reachable, as the arena's
	 * segments keep the classes' blocks through their spans.
	 */
	private final Set<Block> blocks = ConcurrentHashMap.newKeySet();

	/** Cached blocks by size, the most recently cached of a size last. */
	private final TreeMap<Long, ArrayDeque<Cached>> bySize = new TreeMap<>();

	private volatile long cachedBytes;

	private volatile long cachedBuffers;

	private boolean closed;

	LargeBlocks(MemoryAllocator allocator, PoolCounters counters) {
		this.allocator = allocator;
		this.counters = counters;
		this.reserved = counters.reserved();
	}

	/**
	 * A new block of exactly {@code size} bytes from the allocator.
	 * @throws io.gpumem.memory.GpuOutOfMemoryException if the allocator refuses
	 */
	Block allocate(long size) {
		Block block = Block.of(this.allocator.allocate(size), Block.ABOVE_TOP_CLASS, null);
		this.blocks.add(block);
		synchronized (this) {
			this.reserved.add(Block.ABOVE_TOP_CLASS, 1, size);
		}
		return block;
	}

	/** The smallest cached block of at least {@code size} and at most {@link #REUSE_MARGIN} more; null if none. */
	@Override
	public synchronized Block take(int classIndex, long size, int home) {
		Map.Entry<Long, ArrayDeque<Cached>> fit = this.bySize.ceilingEntry(size);
		if (fit == null || fit.getKey() - size > REUSE_MARGIN) {
			return null;
		}
		Block block = fit.getValue().pollLast().block();
		if (fit.getValue().isEmpty()) {
			this.bySize.remove(fit.getKey());
		}
		return uncached(block);
	}

	/** Caches the block where {@code cache} allows and the tier is open, and frees it otherwise. */
	@Override
	public boolean giveBack(Block block, int home, long stamp, boolean cache) {
		synchronized (this) {
			if (cache && !this.closed) {
				this.bySize.computeIfAbsent(block.size, (size) -> new ArrayDeque<>()).addLast(new Cached(block, stamp));
				this.cachedBytes += block.size;
				this.cachedBuffers++;
				return true;
			}
		}
		free(block);
		this.counters.countTrimmed(block.size);
		return false;
	}

	/** Frees the least recently cached blocks to the allocator. */
	@Override
	public long release(long bytes, long cutoff) {
		List<Block> released = new ArrayList<>();
		synchronized (this) {
			List<Cached> all = new ArrayList<>();
			this.bySize.values().forEach(all::addAll);
			all.sort((a, b) -> Long.compare(a.stamp(), b.stamp()));
			long covered = 0;
			for (Cached cached : all) {
				if (covered >= bytes || cached.stamp() > cutoff) {
					break;
				}
				this.bySize.get(cached.block().size).remove(cached);
				released.add(uncached(cached.block()));
				covered += cached.block().size;
			}
			this.bySize.values().removeIf(ArrayDeque::isEmpty);
		}
		long freed = 0;
		for (Block block : released) {
			free(block);
			freed += block.size;
		}
		this.counters.countTrimmed(freed);
		return freed;
	}

	@Override
	public long cachedBytes() {
		return this.cachedBytes;
	}

	@Override
	public void addCached(long[] buffers, long[] bytes) {
		buffers[buffers.length - 1] += this.cachedBuffers;
		bytes[bytes.length - 1] += this.cachedBytes;
	}

	@Override
	public synchronized void collectCached(ObjLongConsumer<Block> cached) {
		this.bySize.values().forEach((blocks) -> blocks.forEach((kept) -> cached.accept(kept.block, kept.stamp)));
	}

	/** Each block held, a segment of its own. */
	List<Block> blocks() {
		return List.copyOf(this.blocks);
	}

	@Override
	public void close() {
		synchronized (this) {
			this.closed = true;
		}
		release(Long.MAX_VALUE, Long.MAX_VALUE);
	}

	private void free(Block block) {
		this.blocks.remove(block);
		synchronized (this) {
			this.reserved.add(Block.ABOVE_TOP_CLASS, -1, block.size);
		}
		this.allocator.free(block.allocation);
	}

	private Block uncached(Block block) {
		this.cachedBytes -= block.size;
		this.cachedBuffers--;
		return block;
	}

	private record Cached(Block block, long stamp) {

	}

}
