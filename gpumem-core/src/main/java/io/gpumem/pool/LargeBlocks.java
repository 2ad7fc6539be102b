package io.gpumem.pool;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The cached blocks above the top size class, each allocated to the exact size of the request that
 * missed. A request takes the smallest cached block that fits it, if that block is at most
 * {@link #REUSE_MARGIN} larger (PyTorch's bound for blocks it does not split), so that one reuse wastes
 * at most that much. Large requests are rare and slow on a miss; one lock guards it all.
 */
final class LargeBlocks {

	/** A request takes a cached block at most this many bytes larger than it. */
	static final long REUSE_MARGIN = 20L << 20;

	/** Cached blocks by size, the most recently cached of a size last. */
	private final TreeMap<Long, ArrayDeque<Cached>> bySize = new TreeMap<>();

	private volatile long cachedBytes;

	private volatile long cachedBuffers;

	private boolean closed;

	/** The smallest cached block of at least {@code bytes} and at most {@link #REUSE_MARGIN} more; null if none. */
	synchronized Block take(long bytes) {
		Map.Entry<Long, ArrayDeque<Cached>> fit = this.bySize.ceilingEntry(bytes);
		if (fit == null || fit.getKey() - bytes > REUSE_MARGIN) {
			return null;
		}
		Block block = fit.getValue().pollLast().block();
		if (fit.getValue().isEmpty()) {
			this.bySize.remove(fit.getKey());
		}
		return uncached(block);
	}

	/** Caches {@code block}, returned at {@code stamp}; false, caching nothing, once closed. */
	synchronized boolean put(Block block, long stamp) {
		if (this.closed) {
			return false;
		}
		this.bySize.computeIfAbsent(block.size, (size) -> new ArrayDeque<>()).addLast(new Cached(block, stamp));
		this.cachedBytes += block.size;
		this.cachedBuffers++;
		return true;
	}

	/** Removes the least recently cached blocks until at least {@code bytes} are removed or none is left. */
	synchronized List<Block> removeOldest(long bytes) {
		List<Cached> all = new ArrayList<>();
		this.bySize.values().forEach(all::addAll);
		all.sort((a, b) -> Long.compare(a.stamp(), b.stamp()));
		List<Block> removed = new ArrayList<>();
		long covered = 0;
		for (Cached cached : all) {
			if (covered >= bytes) {
				break;
			}
			this.bySize.get(cached.block().size).remove(cached);
			removed.add(uncached(cached.block()));
			covered += cached.block().size;
		}
		this.bySize.values().removeIf(ArrayDeque::isEmpty);
		return removed;
	}

	/** Removes every block cached at or before {@code cutoff} on the pool's clock. */
	synchronized List<Block> removeIdle(long cutoff) {
		List<Block> removed = new ArrayList<>();
		for (ArrayDeque<Cached> blocks : this.bySize.values()) {
			for (Iterator<Cached> it = blocks.iterator(); it.hasNext();) {
				Cached cached = it.next();
				if (cached.stamp() <= cutoff) {
					it.remove();
					removed.add(uncached(cached.block()));
				}
			}
		}
		this.bySize.values().removeIf(ArrayDeque::isEmpty);
		return removed;
	}

	/** Takes every cached block out, and caches nothing more. */
	synchronized List<Block> close() {
		this.closed = true;
		return removeIdle(Long.MAX_VALUE);
	}

	long cachedBytes() {
		return this.cachedBytes;
	}

	long cachedBuffers() {
		return this.cachedBuffers;
	}

	private Block uncached(Block block) {
		this.cachedBytes -= block.size;
		this.cachedBuffers--;
		return block;
	}

	private record Cached(Block block, long stamp) {

	}

}
