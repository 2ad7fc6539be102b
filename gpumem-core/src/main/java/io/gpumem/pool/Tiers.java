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
 * A pool's tiers and the routes between them, a {@link Route} per class decided when the pool is made: a request's
 * block is looked for where its route's hit looks (the class's free list, or the stripe's last block), then in the
 * tiers of its miss in order (its class's free list, the next class's where the policy lets a miss borrow it, the
 * arena's free spans, or above the top class the large blocks) before the allocator is asked for a new one; a
 * returned block reaches the tier its route names first (the free lists or the last blocks, which count it and keep
 * it where the {@link CachePolicy} allows), and the tier whose memory it is otherwise. What a tier above the arena lets
 * go of is handed down here ({@link Beneath}), and nowhere else. A trim asks each tier in {@link #trimOrder() declared
 * order} to let go of what it keeps until the pool caches no more than it should.
 */
final class Tiers implements Beneath {

	private static final System.Logger LOGGER = System.getLogger(StratifiedMemoryPool.class.getName());

	private final String name;

	private final SizeClassLadder ladder;

	private final CachePolicy policy;

	private final PoolCounters counters;

	private final Arena arena;

	private final LargeBlocks large;

	private final StatisticsAllocator reserved;

	private final FreeLists front;

	private final LastBlocks lasts;

	/** The route of each class, {@link Block#ABOVE_TOP_CLASS} first: at {@code classIndex + 1}. */
	private final Route[] routes;

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
	 * bytes they hold, which the statistics and history read too. A request that would map while the arena sleeps runs
	 * {@code wakeBeforeMapping} first ({@link Arena#allocate}).
	 */
	Tiers(MemoryAllocator allocator, StatisticsAllocator reserved, PoolConfig config, PoolCounters counters,
			Runnable wakeBeforeMapping) {
		this.name = config.name();
		this.reserved = reserved;
		this.ticker = config.ticker();
		this.clock = this.ticker.getAsLong();
		this.ladder = config.sizeClasses();
		this.policy = new CachePolicy(config);
		this.counters = counters;
		this.arena = new Arena(allocator, allocator.streamOrdered() ? Arena.ALIGNMENT : config.segmentBytes(),
				config.mappingStepBytes(), counters, this.policy::front, wakeBeforeMapping);
		this.large = new LargeBlocks(allocator, counters);
		this.front = new FreeLists(this.ladder, this.policy, config.stripes(), counters, this);
		this.lasts = this.front.lastBlocks();
		this.routes = new Route[this.ladder.count() + 1];
		for (int c = Block.ABOVE_TOP_CLASS; c < this.ladder.count(); c++) {
			this.routes[c + 1] = routeOf(c);
		}
	}

	/**
	 * The route of a class (or {@link Block#ABOVE_TOP_CLASS}). A class the free lists keep hits its stack, and on a
	 * miss looks in its stacks where blocks came back, in the next class's where it may borrow, then in the arena; a
	 * larger class hits the stripe's last block and cuts from the arena; above the top class a request hits nothing and
	 * looks in the arena where its segments are ranges, which serve any size, else in the large blocks.
	 */
	private Route routeOf(int classIndex) {
		if (this.policy.front(classIndex)) {
			List<Route.Look> looks = new ArrayList<>();
			looks.add((size, home, returned) -> returned ? this.front.take(classIndex, size, home) : null);
			if (this.policy.upgrades(classIndex)) {
				looks.add((size, home, returned) -> this.front.take(classIndex + 1, size, home));
			}
			looks.addAll(cuts(classIndex));
			return new Route(Route.Hit.STACK, this.ladder.size(classIndex), List.copyOf(looks), this.front, this.arena);
		}
		if (classIndex != Block.ABOVE_TOP_CLASS) {
			return new Route(Route.Hit.LAST, 0, cuts(classIndex), this.lasts, this.arena);
		}
		if (this.arena.expandable()) {
			return new Route(Route.Hit.NONE, 0, cuts(classIndex), this.front, this.arena);
		}
		return new Route(Route.Hit.NONE, 0,
				List.of((size, home, returned) -> this.large.take(classIndex, size, home)), this.front, this.large);
	}

	/**
	 * The looks of a miss in the arena: its free spans, and again once the stripes' last blocks went down where they
	 * lie in the spans the class is cut from.
	 */
	private List<Route.Look> cuts(int classIndex) {
		Route.Look cut = (size, home, returned) -> this.arena.take(classIndex, size, home);
		if (!this.arena.cutBesideLarger(classIndex)) {
			return List.of(cut);
		}
		Route.Look again = (size, home, returned) -> this.lasts.handDownEvery() ? cut.take(size, home, returned) : null;
		return List.of(cut, again);
	}

	private Route route(int classIndex) {
		return this.routes[classIndex + 1];
	}

	/**
	 * The bytes a request of a class (or {@link Block#ABOVE_TOP_CLASS}) asks of the tiers: its class up to the front's
	 * limit, else its size.
	 */
	long blockSize(int classIndex, long bytes) {
		return route(classIndex).blockSize(bytes);
	}

	/**
	 * The hit path: counts the request of {@code bytes} of a class (or {@link Block#ABOVE_TOP_CLASS}) on stripe {@code
	 * home}, and takes a cached block of it where its route's hit looks; null when there is none.
	 */
	Block hit(int classIndex, long bytes, int home) {
		Route.Hit hit = route(classIndex).hit;
		if (hit == Route.Hit.STACK) {
			return this.front.hit(classIndex, bytes, home);
		}
		if (hit == Route.Hit.LAST) {
			return this.lasts.hit(classIndex, bytes, Arena.spanSize(bytes), home);
		}
		this.front.countRequest(classIndex, bytes, home);
		return null;
	}

	/** Counts a request served from a shelf. */
	void countRequest(int classIndex, long bytes, int home) {
		this.front.countRequest(classIndex, bytes, home);
	}

	/**
	 * A block the tiers keep for a request of {@code size} bytes ({@link #blockSize}) that missed the hit path, from
	 * the looks of its route's miss ({@code returned}: whether blocks have come back since the last miss); null when
	 * the allocator must be asked. A class the free lists keep counts its use: its stripe had none of its blocks.
	 */
	Block cached(int classIndex, long size, int home, boolean returned) {
		Route route = route(classIndex);
		Block block = route.miss(size, home, returned);
		if (route.front()) {
			this.counters.countUse(classIndex, false);
		}
		return block;
	}

	/**
	 * A new block from the allocator, by the tier its route names the owner: cut from the arena, or a large block of
	 * its own.
	 * @throws io.gpumem.memory.GpuOutOfMemoryException if the allocator refuses
	 */
	Block allocate(int classIndex, long size) {
		Block block = (route(classIndex).owner == this.arena) ? this.arena.allocate(classIndex, size, tick())
				: this.large.allocate(size);
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
		boolean front = route(classIndex).front();
		if (!front) {
			this.arena.grow(classSize, added, stamp);
		}
		for (int i = 0; front && i < added; i++) {
			Block block = allocate(classIndex, classSize);
			if (!this.front.add(block, stamp, i)) {
				this.arena.giveBack(block, -1, stamp, false);
			}
		}
		this.counters.notePeak(reservedBytes());
		return added;
	}

	/**
	 * Takes a returned block back from stripe {@code home}: to the tier its route names first, which keeps it where
	 * the policy allows, else to the tier whose memory it is; as a block above the free lists' classes comes back,
	 * what is cached beyond {@code max-cached} goes back to the allocator ({@link #releaseExcess}).
	 */
	void giveBack(Block block, int home) {
		Route route = route(block.classIndex);
		long stamp = this.clock;
		boolean cache = mayCache(block, route);
		boolean kept = route.first.giveBack(block, home, stamp, cache && route.keepsFirst());
		if (kept && route.front()) {
			return;
		}
		if (!kept) {
			route.owner.giveBack(block, home, stamp, cache);
		}
		if (reservedBytes() > this.policy.maxBytes()) {
			releaseExcess();
		}
	}

	/**
	 * Gives back what is cached beyond {@code max-cached} as a block comes back (two closes at once may each have
	 * found room for theirs), the oldest large blocks first, then free segments. The block's lend has ended whatever
	 * happens here: where the driver refuses, the refusal is logged rather than thrown at the close, and what it
	 * refused to unmap stays cached for a later trim.
	 */
	private void releaseExcess() {
		try {
			long excess = this.policy.excess(cachedBytes());
			if (excess > 0) {
				excess -= this.large.release(excess, Long.MAX_VALUE);
			}
			if (excess > 0) {
				this.arena.release(excess, Long.MAX_VALUE);
			}
		}
		catch (RuntimeException ex) {
			LOGGER.log(System.Logger.Level.WARNING, "Pool '" + this.name + "' could not give back what it caches "
					+ "beyond max-cached as a buffer came back; it stays cached for a later trim", ex);
		}
	}

	/**
	 * Whether a returned block may be kept, with room under the caps. Where even every block reserved counted as
	 * cached leaves room, nothing cached is counted.
	 */
	private boolean mayCache(Block block, Route route) {
		int classIndex = block.classIndex;
		boolean front = route.front();
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
	 * for a front class, what the free lists, the last blocks and the shelves hold ({@link #cachedAboveArena}), since a
	 * block cut from a segment holds its span whether it is kept or given back to the arena; for any other, all that is
	 * cached, since its block or segment could go back to the allocator when it is not kept.
	 */
	private long cachedAgainst(int classIndex) {
		return route(classIndex).front() ? cachedAboveArena() : cachedBytes();
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
	 * whole allocation given back), the arena's free segments, the stripes' last blocks, then the free lists, whose
	 * blocks free segments only as their neighbours come free.
	 */
	private List<Tier> trimOrder() {
		List<Tier> order = new ArrayList<>(this.shelves);
		order.addAll(List.of(this.large, this.arena, this.lasts, this.front));
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

	/** Hands a block a tier above the arena lets go of to the tier whose memory it is, as free since {@code stamp}. */
	@Override
	public void handDown(Block block, int home, long stamp) {
		route(block.classIndex).owner.giveBack(block, home, stamp, false);
	}

	/**
	 * Takes back blocks a tier above the arena (a shelf, the free lists, the last blocks) lets go of, as free since
	 * {@code cutoff}: a block cut from the arena to it, which gives back what is free until it covers {@code bytes}; a
	 * large block of its own to the allocator.
	 * @return the bytes the allocator got back
	 */
	@Override
	public long handDownAll(List<Block> blocks, long bytes, long cutoff) {
		List<Block> cut = new ArrayList<>();
		long freed = 0;
		for (Block block : blocks) {
			if (route(block.classIndex).owner == this.arena) {
				cut.add(block);
			}
			else {
				this.large.giveBack(block, -1, cutoff, false);
				freed += block.size;
			}
		}
		return freed + this.arena.giveBackAll(cut, Math.max(0, bytes - freed), cutoff);
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

	/**
	 * Bytes cached in the free lists, as last blocks and on the shelves: those a trim moves into the arena before it
	 * frees them.
	 */
	long cachedAboveArena() {
		long cached = this.front.cachedBytes() + this.lasts.cachedBytes();
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

	/** Whether the arena sleeps ({@link Arena#asleep()}): never over fixed segments. */
	boolean asleep() {
		return this.arena.asleep();
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
