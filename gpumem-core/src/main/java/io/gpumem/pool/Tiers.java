package io.gpumem.pool;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;

import io.gpumem.allocator.StatisticsAllocator;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.arena.Arena;
import io.gpumem.pool.arena.Block;
import io.gpumem.pool.arena.Tier;
import io.gpumem.pool.diagnostics.PoolRecorder;

/**
 * A pool's tiers and the routes between them. A request's block is looked for in the tiers in order (its
 * class's free list, the next class's where the policy lets a miss borrow it, the arena's free spans; above
 * the top class the large blocks) before the allocator is asked for a new one; a returned block goes through
 * the free lists, which count it and keep it where the {@link CachePolicy} allows, and on to the arena or
 * the large blocks; a trim asks each tier in {@link #trimOrder() declared order} to let go of what it keeps
 * until the pool caches no more than it should.
 */
final class Tiers {

	private final SizeClassLadder ladder;

	private final CachePolicy policy;

	private final PoolCounters counters;

	private final Arena arena;

	private final LargeBlocks large;

	private final StatisticsAllocator reserved;

	private final FreeLists front;

	/** The shelves of the pool's users, trimmed first. */
	private final List<KeyedShelf> shelves = new CopyOnWriteArrayList<>();

	/**
	 * The recency clock, which stamps what the tiers keep: it ticks on every slow path and maintenance run, so
	 * blocks kept between two ticks are ordered by stack position, not by time.
	 */
	private volatile long clock;

	private final LongSupplier ticker;

	private boolean closed;

	/**
	 * The tiers over {@code allocator}, which draws on {@code reserved}: its current bytes are the one count of the
	 * bytes they hold, which the statistics and history read too.
	 */
	Tiers(MemoryAllocator allocator, StatisticsAllocator reserved, PoolConfig config, PoolCounters counters) {
		this.reserved = reserved;
		this.ticker = config.ticker();
		this.clock = this.ticker.getAsLong();
		this.ladder = config.sizeClasses();
		this.policy = new CachePolicy(config);
		this.counters = counters;
		this.arena = new Arena(allocator, allocator.streamOrdered() ? Arena.ALIGNMENT : config.segmentBytes(),
				config.mappingStepBytes(), counters, this.policy::front);
		this.large = new LargeBlocks(allocator, counters);
		this.front = new FreeLists(this.ladder, this.policy, config.stripes(), counters, this.arena, this.large);
	}

	/**
	 * The bytes a request of a class (or {@link Block#ABOVE_TOP_CLASS}) asks of the tiers: its class up to the front's
	 * limit, else its size.
	 */
	long blockSize(int classIndex, long bytes) {
		return this.policy.front(classIndex) ? this.ladder.size(classIndex) : bytes;
	}

	/**
	 * The hit path: counts the request of {@code bytes} of a class (or {@link Block#ABOVE_TOP_CLASS}) on stripe {@code
	 * home}, and takes a cached block of it, for a larger class the stripe's last returned where it is of the
	 * request's size; null when there is none.
	 */
	Block hit(int classIndex, long bytes, int home) {
		if (this.policy.front(classIndex)) {
			return this.front.hit(classIndex, bytes, home);
		}
		if (classIndex != Block.ABOVE_TOP_CLASS) {
			return this.front.hitLast(classIndex, bytes, Arena.spanSize(bytes), home);
		}
		this.front.countRequest(classIndex, bytes, home);
		return null;
	}

	/** Counts a request served from a shelf. */
	void countRequest(int classIndex, long bytes, int home) {
		this.front.countRequest(classIndex, bytes, home);
	}

	/**
	 * A block the tiers keep for a request of {@code size} bytes ({@link #blockSize}) that missed the hit path,
	 * in their order, the class's own free list only when blocks have come back since ({@code returned}); null
	 * when the allocator must be asked. Before that, the stripes' last blocks above the free lists' classes go back
	 * to the arena, so that memory of one size serves another before any is allocated. A class the free lists keep
	 * counts its use: its stripe had none of its blocks.
	 */
	Block cached(int classIndex, long size, int home, boolean returned) {
		if (!this.policy.front(classIndex)) {
			return take((classIndex == Block.ABOVE_TOP_CLASS) ? aboveTop() : this.arena, classIndex, size, home);
		}
		Block block = returned ? this.front.take(classIndex, size, home) : null;
		if (block == null && this.policy.upgrades(classIndex)) {
			block = this.front.take(classIndex + 1, size, home);
		}
		block = (block != null) ? block : take(this.arena, classIndex, size, home);
		this.counters.countUse(classIndex, false);
		return block;
	}

	/**
	 * A block {@code tier} keeps for the request, taken again once the stripes' last blocks went back to the arena
	 * where they lie in the spans it is cut from.
	 */
	private Block take(Tier tier, int classIndex, long size, int home) {
		Block block = tier.take(classIndex, size, home);
		if (block == null && tier == this.arena && this.arena.cutBesideLarger(classIndex)
				&& this.front.giveBackLast()) {
			block = tier.take(classIndex, size, home);
		}
		return block;
	}

	/**
	 * A new block from the allocator: cut from the arena, or above the top class a block of its own where the
	 * arena's segments are allocations.
	 * @throws io.gpumem.memory.GpuOutOfMemoryException if the allocator refuses
	 */
	Block allocate(int classIndex, long size) {
		Block block = (classIndex != Block.ABOVE_TOP_CLASS || aboveTop() == this.arena)
				? this.arena.allocate(classIndex, size, tick()) : this.large.allocate(size);
		this.counters.notePeak(reservedBytes());
		return block;
	}

	/**
	 * Warms a class with up to {@code count} blocks, as far as the policy allows, packed in the arena:
	 * kept in the free lists for a front class, free in the arena for another.
	 * @return how many were added
	 */
	int warm(int classIndex, int count) {
		long stamp = tick();
		long classSize = this.ladder.size(classIndex);
		long room = this.policy.room(classIndex, Arena.spanSize(classSize), this.front.cachedBuffers(classIndex),
				cachedAgainst(classIndex));
		int added = (int) Math.min(count, room);
		if (!this.policy.front(classIndex)) {
			this.arena.grow(classSize, added, stamp);
		}
		for (int i = 0; this.policy.front(classIndex) && i < added; i++) {
			Block block = allocate(classIndex, classSize);
			if (!this.front.add(block, stamp, i)) {
				this.arena.giveBack(block, -1, stamp, false);
			}
		}
		this.counters.notePeak(reservedBytes());
		return added;
	}

	/**
	 * Takes a returned block back from stripe {@code home}: kept in the free lists where the policy allows, else given
	 * to the arena or the large blocks ({@link FreeLists#beneath}); as a block above the free lists' classes comes back,
	 * what is cached beyond {@code max-cached} goes back to the allocator, the oldest large blocks first (two closes at
	 * once may each have found room for theirs), then free segments.
	 */
	void giveBack(Block block, int home) {
		long stamp = this.clock;
		boolean cache = mayCache(block);
		boolean kept = this.front.giveBack(block, home, stamp, cache);
		if (kept && this.policy.front(block.classIndex)) {
			return;
		}
		if (!kept) {
			this.front.beneath(block).giveBack(block, home, stamp, cache);
		}
		if (reservedBytes() > this.policy.maxBytes()) {
			long excess = this.policy.excess(cachedBytes());
			if (excess > 0) {
				excess -= this.large.release(excess, Long.MAX_VALUE);
			}
			if (excess > 0) {
				this.arena.release(excess, Long.MAX_VALUE);
			}
		}
	}

	/**
	 * Whether a returned block may be kept, with room under the caps. Where even every block reserved counted as
	 * cached leaves room, nothing cached is counted.
	 */
	boolean mayCache(Block block) {
		int classIndex = block.classIndex;
		boolean front = this.policy.front(classIndex);
		return this.policy.fits(classIndex, block.size, front ? this.arena.keptBuffers(classIndex) - 1 : 0,
				reservedBytes() - block.size)
				|| this.policy.fits(classIndex, block.size, front ? this.front.cachedBuffers(classIndex) : 0,
						cachedAgainst(classIndex));
	}

	/** Whether a block may be set aside on a shelf: room under {@code max-cached}. */
	boolean mayShelve(Block block) {
		return this.policy.fits(Block.ABOVE_TOP_CLASS, block.size, 0, cachedAgainst(block.classIndex));
	}

	/**
	 * The cached bytes {@code max-cached} weighs keeping a block of a class (or {@link Block#ABOVE_TOP_CLASS}) against:
	 * for a front class, what the free lists and shelves hold, since a block cut from a segment holds its span whether it
	 * is kept or given back to the arena; for any other, all that is cached, since its block or segment could go back
	 * to the allocator when it is not kept.
	 */
	private long cachedAgainst(int classIndex) {
		return this.policy.front(classIndex) ? cachedAboveArena() : cachedBytes();
	}

	/**
	 * Lets go of cached memory, the tiers in {@link #trimOrder()}, each least recently used first, until at
	 * most {@code keepBytes} stay cached; only what was kept {@code idleNanos} or longer ago on the clock.
	 * @return the bytes the allocator got back
	 */
	synchronized long trim(long keepBytes, long idleNanos) {
		long cutoff = tick() - idleNanos;
		long released = 0;
		for (Tier tier : trimOrder()) {
			long excess = cachedBytes() - keepBytes;
			if (excess <= 0) {
				break;
			}
			released += tier.release(excess, cutoff);
		}
		return released;
	}

	/**
	 * The order a trim goes through the tiers: the shelves (what users set aside), the large blocks (each a
	 * whole allocation given back), the arena's free segments, then the free lists, whose blocks free segments
	 * only as their neighbours come free.
	 */
	private List<Tier> trimOrder() {
		List<Tier> order = new ArrayList<>(this.shelves);
		order.addAll(List.of(this.large, this.arena, this.front));
		return order;
	}

	/**
	 * A new shelf of the pool's, trimmed first until it is closed; {@code leaks} watches the buffers it lends
	 * again.
	 * @throws IllegalStateException once the tiers are closed
	 */
	synchronized KeyedShelf shelf(StratifiedMemoryPool pool, LeakWatch leaks, int maxPerKey) {
		if (this.closed) {
			throw new IllegalStateException("pool '" + pool.name() + "' is closed");
		}
		KeyedShelf shelf = new KeyedShelf(pool, leaks, this, maxPerKey, this.counters.slots());
		this.shelves.add(shelf);
		return shelf;
	}

	/** Leaves out a closed shelf. */
	void forget(KeyedShelf shelf) {
		this.shelves.remove(shelf);
	}

	/**
	 * Takes back blocks a shelf lets go of, as free since {@code cutoff}: a block cut from the arena into it, which
	 * gives back what is free until it covers {@code bytes}; a large block of its own to the allocator.
	 * @return the bytes the allocator got back
	 */
	long giveBackAll(List<Block> blocks, long bytes, long cutoff) {
		List<Block> classBlocks = new ArrayList<>();
		long freed = 0;
		for (Block block : blocks) {
			if (block.span != null) {
				classBlocks.add(block);
			}
			else {
				this.large.giveBack(block, -1, cutoff, false);
				freed += block.size;
			}
		}
		return freed + this.arena.giveBackAll(classBlocks, Math.max(0, bytes - freed), cutoff);
	}

	/** Counts the return of a block that goes onto a shelf rather than back through the free lists. */
	void countReturn(Block block, int home) {
		this.front.countReturn(block.classIndex, home);
	}

	/** The pool's memory map ({@link PoolSnapshot}); {@code pending}: the blocks closed after stream work. */
	PoolSnapshot snapshot(String pool, Map<Block, Upkeep.Pending> pending, Map<Object, PoolRecorder.Lend> lends) {
		return PoolSnapshot.of(pool, reservedBytes(), this.arena, this.large, trimOrder(), pending, lends);
	}

	/** Bytes held from the allocator: the arena's segments and the blocks above the top class. */
	long reservedBytes() {
		return this.reserved.currentBytes();
	}

	/** Above the top class: the arena where its segments are ranges, which serve any size; else large blocks. */
	private Tier aboveTop() {
		return this.arena.expandable() ? this.arena : this.large;
	}

	/** Bytes cached in the free lists and on the shelves: those a trim moves into the arena before it frees them. */
	long cachedAboveArena() {
		long cached = this.front.cachedBytes();
		for (KeyedShelf shelf : this.shelves) {
			cached += shelf.cachedBytes();
		}
		return cached;
	}

	/** Bytes cached in every tier: exact when no thread is acquiring or releasing, a recent value otherwise. */
	long cachedBytes() {
		return cachedAboveArena() + this.arena.cachedBytes() + this.large.cachedBytes();
	}

	/** The pool's statistics: the counters, with what each tier keeps per class and the arena's segments. */
	PoolStatistics statistics(String pool, MemoryKind kind) {
		long[] buffers = new long[this.counters.slots()];
		long[] bytes = new long[this.counters.slots()];
		for (Tier tier : trimOrder()) {
			tier.addCached(buffers, bytes);
		}
		return this.counters.snapshot(pool, kind, this.ladder, this.policy.maxBytes(), buffers, bytes,
				segments()).held(reservedBytes());
	}

	/** The arena's pieces of memory, their bytes, the bytes free in them, the largest free run and the addresses. */
	PoolStatistics.Segments segments() {
		return PoolStatistics.Segments.of(this.arena.pieces(), this.arena.segmentBytes(), this.arena.cachedBytes(),
				this.arena.addressBytes());
	}

	/** Whether the arena's segments are ranges whose granules are mapped as needed. */
	boolean expandable() {
		return this.arena.expandable();
	}

	/** Puts the arena to sleep ({@link Arena#sleep}): answers the bytes given back, and of them those offloaded. */
	long[] sleep(boolean offload) {
		return this.arena.sleep(offload);
	}

	/** Wakes the arena ({@link Arena#wake}): answers the bytes mapped again, and of them those copied back. */
	long[] wake() {
		return this.arena.wake();
	}

	/** The bytes of host memory holding the content of the arena's granules asleep. */
	long offloadedBytes() {
		return this.arena.offloadedBytes();
	}

	/** The bytes of the arena's granules asleep. */
	long sleepingBytes() {
		return this.arena.sleepingBytes();
	}

	/** Lets go of everything cached, the shelves first, and caches nothing more. */
	synchronized void close() {
		this.closed = true;
		trimOrder().forEach(Tier::close);
	}

	/** Advances the clock and answers it. */
	long tick() {
		long now = Math.max(this.ticker.getAsLong(), this.clock + 1);
		this.clock = now;
		return now;
	}

}
