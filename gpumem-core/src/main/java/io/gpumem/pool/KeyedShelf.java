package io.gpumem.pool;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.ObjLongConsumer;

import io.gpumem.pool.arena.Block;
import io.gpumem.pool.arena.ReservedBlocks;
import io.gpumem.pool.arena.Tier;

/**
 * A pool's tier of blocks set aside by key ({@link BufferShelf}): a stack per key, the most recently set
 * aside lent first, trimmed least recently set aside first across all keys. One lock guards the stacks;
 * the counts per key and per class are read without it.
 */
final class KeyedShelf implements BufferShelf, Tier {

	private final StratifiedMemoryPool pool;

	private final LeakWatch leaks;

	private final Tiers tiers;

	private final int maxPerKey;

	private final Map<Object, ArrayDeque<Kept>> byKey = new HashMap<>();

	/** Per key, the blocks set aside and their bytes, read without the lock. */
	private final Map<Object, KeyCounts> counts = new ConcurrentHashMap<>();

	private final AtomicLongArray buffers;

	private final AtomicLongArray bytes;

	private volatile long cachedBytes;

	private boolean closed;

	KeyedShelf(StratifiedMemoryPool pool, LeakWatch leaks, Tiers tiers, int maxPerKey, int slots) {
		if (maxPerKey < 0) {
			throw new IllegalArgumentException("a shelf keeps 0 or more buffers per key, not " + maxPerKey);
		}
		this.pool = pool;
		this.leaks = leaks;
		this.tiers = tiers;
		this.maxPerKey = maxPerKey;
		this.buffers = new AtomicLongArray(slots);
		this.bytes = new AtomicLongArray(slots);
	}

	@Override
	public PooledBuffer take(Object key) {
		Kept kept;
		synchronized (this) {
			ArrayDeque<Kept> stack = this.byKey.get(key);
			kept = (stack != null) ? stack.pollLast() : null;
			if (kept == null) {
				return null;
			}
			removed(key, kept);
		}
		ThreadState thread = ThreadState.current();
		this.tiers.countRequest(kept.block.classIndex, kept.requestedBytes, thread.stripe);
		return this.leaks.lend(this.pool, kept.block, kept.requestedBytes, thread, thread.stripe, false,
				this.leaks.begin(kept.requestedBytes), null, null);
	}

	@Override
	public boolean put(Object key, PooledBuffer buffer) {
		int home = buffer.stripe();
		Block block = buffer.detach(this.pool);
		if (block == null) {
			return false;
		}
		if (this.tiers.mayShelve(block) && keep(key, block, buffer.size())) {
			this.tiers.countReturn(block, home);
			return true;
		}
		this.pool.giveBack(block, home);
		return false;
	}

	private synchronized boolean keep(Object key, Block block, long requestedBytes) {
		ArrayDeque<Kept> stack = this.byKey.computeIfAbsent(key, (k) -> new ArrayDeque<>());
		if (this.closed || stack.size() >= this.maxPerKey) {
			if (stack.isEmpty()) {
				this.byKey.remove(key);
			}
			return false;
		}
		stack.addLast(new Kept(key, block, requestedBytes, this.tiers.tick()));
		count(key, block, 1);
		return true;
	}

	@Override
	public int count(Object key) {
		KeyCounts counts = this.counts.get(key);
		return (counts != null) ? counts.buffers.get() : 0;
	}

	@Override
	public long cachedBytes(Object key) {
		KeyCounts counts = this.counts.get(key);
		return (counts != null) ? counts.bytes.get() : 0;
	}

	@Override
	public long trim(long keepBytes) {
		if (keepBytes < 0) {
			throw new IllegalArgumentException("trim target must not be negative: " + keepBytes + " bytes");
		}
		List<Block> removed = removeOldest(this.cachedBytes - keepBytes, Long.MAX_VALUE);
		long bytes = removed.stream().mapToLong((block) -> block.size).sum();
		this.tiers.handDownAll(removed, bytes, this.tiers.tick());
		return bytes;
	}

	/** Takes nothing for a request: what lies here is lent by key only. */
	@Override
	public Block take(int classIndex, long size, int home) {
		return null;
	}

	/** Keeps nothing handed to it: blocks come here by key only, and go on to the tier beneath. */
	@Override
	public boolean giveBack(Block block, int home, long stamp, boolean cache) {
		this.tiers.handDownAll(List.of(block), 0, stamp);
		return false;
	}

	/** Lets go of the blocks set aside least recently, whatever their key. */
	@Override
	public long release(long bytes, long cutoff) {
		return this.tiers.handDownAll(removeOldest(bytes, cutoff), bytes, cutoff);
	}

	@Override
	public long cachedBytes() {
		return this.cachedBytes;
	}

	@Override
	public void addCached(long[] buffers, long[] bytes) {
		for (int s = 0; s < buffers.length; s++) {
			buffers[s] += this.buffers.get(s);
			bytes[s] += this.bytes.get(s);
		}
	}

	@Override
	public synchronized void collectCached(ObjLongConsumer<Block> cached) {
		this.byKey.values().forEach((kept) -> kept.forEach((each) -> cached.accept(each.block, each.stamp)));
	}

	/** Gives everything set aside back to the pool, sets nothing aside any more, and leaves the pool's tiers. */
	@Override
	public void close() {
		synchronized (this) {
			this.closed = true;
		}
		trim(0);
		this.tiers.forget(this);
	}

	private synchronized List<Block> removeOldest(long bytes, long cutoff) {
		List<Kept> all = new ArrayList<>();
		this.byKey.values().forEach(all::addAll);
		all.sort((a, b) -> Long.compare(a.stamp, b.stamp));
		List<Block> removed = new ArrayList<>();
		long covered = 0;
		for (Kept kept : all) {
			if (covered >= bytes || kept.stamp > cutoff) {
				break;
			}
			this.byKey.get(kept.key).remove(kept);
			removed(kept.key, kept);
			removed.add(kept.block);
			covered += kept.block.size;
		}
		return removed;
	}

	private void removed(Object key, Kept kept) {
		if (this.byKey.get(key).isEmpty()) {
			this.byKey.remove(key);
		}
		count(key, kept.block, -1);
	}

	/** Counts a block of {@code key} set aside (1) or taken off (-1), per key and per class; under the lock. */
	private void count(Object key, Block block, int delta) {
		KeyCounts counts = this.counts.computeIfAbsent(key, (k) -> new KeyCounts());
		counts.buffers.addAndGet(delta);
		counts.bytes.addAndGet(delta * block.size);
		int slot = ReservedBlocks.slot(block.classIndex, this.buffers.length() - 1);
		this.buffers.addAndGet(slot, delta);
		this.bytes.addAndGet(slot, delta * block.size);
		this.cachedBytes += delta * block.size;
	}

	private record Kept(Object key, Block block, long requestedBytes, long stamp) {
	}

	private record KeyCounts(AtomicInteger buffers, AtomicLong bytes) {

		KeyCounts() {
			this(new AtomicInteger(), new AtomicLong());
		}

	}

}
