package io.gpumem.pool;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.gpumem.allocator.StatisticsAllocator;
import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.DeviceHealth;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;
import io.gpumem.observation.MemoryObserver;
import io.gpumem.pool.arena.Arena;
import io.gpumem.pool.arena.Block;
import io.gpumem.pool.diagnostics.PoolHistory;
import io.gpumem.pool.diagnostics.PoolRecorder;
import io.gpumem.pool.recovery.Holdings;
import io.gpumem.stream.GpuEvent;
import io.gpumem.stream.GpuStream;

/**
 * A pool of buffers over any {@link MemoryAllocator}, lending in size classes the memory it holds in segments.
 * <p>
 * Classes up to 64 KiB keep closed buffers in free lists striped so that request threads rarely meet on a
 * lock: the hit path. Every block of a class is cut from segments allocated in steps of
 * {@link PoolConfig#segmentBytes()}, best fit, split and coalesced, so that memory freed by one size serves any
 * other; larger classes' blocks are cut to the request's size. Requests above the top class get a block of
 * their own, reused within 20 MiB. Users may set closed buffers aside on a {@link BufferShelf}. Nothing is
 * cached per thread: a trim reaches every cached byte at once. {@code max-cached-buffers} and
 * {@code max-cached} decide what stays cached when a buffer is closed.
 * <p>
 * A miss (a request that made the pool allocate) is retried after memory is freed, waited for within
 * {@code max-wait}, observed, and failed with a {@link GpuOutOfMemoryException} that adds the pool's figures
 * to the allocator's. Buffers above 64 KiB are counted on the thread that acquired them, so that where every
 * thread holding memory waits for more, the one holding most is told to give way
 * ({@link io.gpumem.memory.GpuRetryOutOfMemoryException}) instead of all of them waiting out {@code max-wait}.
 * An admission by bytes ({@link io.gpumem.admission.GpuAdmission}) lends on its own accounts through the pool's
 * {@link MemorySupply}. Every lend ends in one place, whatever ended it (a close, a close after a stream, a shelf, a
 * leak reclaimed): the holder, the account, the counters and the recorder are settled there. Buffers closed after a
 * stream ({@link PooledBuffer#closeAfter(GpuStream)}) and leaked ones ({@link LeakDetection}) come back on misses,
 * trims and the maintenance run, which also releases what stayed cached {@code idle-trim-after}. Statistics take no
 * lock a request thread takes and change nothing.
 * A pool over a device that failed for good ({@link DeviceHealth}) lends nothing more.
 */
public final class StratifiedMemoryPool implements MemoryPool {

	private static final System.Logger LOGGER = System.getLogger(StratifiedMemoryPool.class.getName());

	private final String name;

	private final MemoryAllocator allocator;

	private final SizeClassLadder ladder;

	private final PoolConfig config;

	private final PoolCounters counters;

	private final Tiers tiers;

	private final Reservation reservation;

	private final Supply supply = new Supply();

	/** Which threads hold the pool's buffers above the free lists' classes, where threads may be told to give way. */
	private final Holdings holdings;

	private final LeakWatch leaks;

	private final Upkeep upkeep;

	private final DeviceHealth health;

	private final PoolRecorder recorder;

	private final PoolSleep sleep;

	private final AtomicBoolean closed = new AtomicBoolean();

	/**
	 * A pool lending memory of {@code allocator}, warmed as the configuration says.
	 * @throws GpuOutOfMemoryException if the warm-up cannot be allocated (nothing is left reserved)
	 */
	public StratifiedMemoryPool(MemoryAllocator allocator, PoolConfig config) {
		this.allocator = Objects.requireNonNull(allocator, "allocator");
		this.health = allocator.health();
		this.name = config.name();
		this.ladder = config.sizeClasses();
		this.config = config;
		this.counters = new PoolCounters(this.ladder.count(), config.stripes());
		StatisticsAllocator reserved = new StatisticsAllocator(allocator);
		this.recorder = PoolRecorder.of(this.name, config.history(), reserved::currentBytes,
				deviceBytes(allocator), config.stripes(), () -> ThreadState.current().stripe);
		this.tiers = new Tiers(this.recorder.recording(reserved), reserved, config, this.counters,
				this::beforeMapping);
		this.leaks = new LeakWatch(config.leakDetection(), this.counters, this.recorder);
		this.upkeep = new Upkeep(this, this.recorder, this.leaks, this.tiers, config.idleTrimAfter());
		this.holdings = config.giveWay() ? new Holdings() : null;
		this.reservation = new Reservation(this, allocator, config, this.tiers, this.upkeep, this.counters,
				this.recorder, this.holdings);
		this.sleep = new PoolSleep(this, this.tiers, this.upkeep, this.reservation, config.sleepOnAcquire(),
				config.stripes());
		long start = System.nanoTime();
		try {
			config.warm().forEach(this::warm);
		}
		catch (RuntimeException ex) {
			close();
			throw ex;
		}
		LOGGER.log(System.Logger.Level.INFO, () -> String.format(
				"Pool '%s' (%s) started: %d size classes %s to %s, %s warmed in %d ms, at most %s cached", this.name,
				allocator.kind(), this.ladder.count(), ByteSizes.format(this.ladder.size(0)),
				ByteSizes.format(this.ladder.largest()), ByteSizes.format(reservedBytes()),
				TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), ByteSizes.format(config.maxCachedBytes())));
	}

	@Override
	public String name() {
		return this.name;
	}

	@Override
	public MemoryKind kind() {
		return this.allocator.kind();
	}

	/** The allocator this pool draws on. */
	public MemoryAllocator allocator() {
		return this.allocator;
	}

	/** The pool's size classes. */
	public SizeClassLadder sizeClasses() {
		return this.ladder;
	}

	/** {@inheritDoc} Its class up to 64 KiB, then its size in 256-byte steps up to the top class, then its size. */
	@Override
	public long blockSize(long bytes) {
		int classIndex = this.ladder.indexOf(bytes);
		return (classIndex == Block.ABOVE_TOP_CLASS) ? bytes : Arena.spanSize(this.tiers.blockSize(classIndex, bytes));
	}

	@Override
	public PooledBuffer acquire(long bytes) {
		return acquire(bytes, this.config.maxWait());
	}

	@Override
	public PooledBuffer acquire(long bytes, Duration maxWait) {
		return acquire(bytes, maxWait, null);
	}

	private PooledBuffer acquire(long bytes, Duration maxWait, LendAccount account) {
		checkRequest("buffer", bytes, maxWait);
		this.sleep.beforeUse("an acquire");
		int classIndex = this.ladder.indexOf(bytes);
		ThreadState thread = ThreadState.current();
		int home = thread.stripe;
		long recorded = this.leaks.begin(bytes);
		Block block = this.tiers.hit(classIndex, bytes, home);
		boolean allocated = false;
		if (block == null) {
			long size = this.tiers.blockSize(classIndex, bytes);
			block = this.reservation.anyWaiting() ? null
					: this.tiers.cached(classIndex, size, home, this.upkeep.giveBackLate());
			allocated = block == null;
			if (allocated) {
				block = this.reservation.reserve(classIndex, size, maxWait.toNanos(), home);
			}
		}
		Holdings.Holder holder = null;
		if (this.holdings != null && bytes > PoolConfig.FREE_LISTS_LIMIT) {
			holder = this.holdings.current();
			holder.add(block.size);
		}
		return this.leaks.lend(this, block, bytes, thread, home, allocated, recorded, holder, account);
	}

	@Override
	public MemorySupply supply() {
		return this.supply;
	}

	/**
	 * Allocates buffers into the class of exactly {@code classSize} bytes, as far as the caps allow.
	 * @return how many buffers were added
	 * @throws IllegalArgumentException if {@code classSize} is not a size class or {@code count} is negative
	 * @throws PoolAsleepException if the pool sleeps and refuses acquires ({@code sleep.on-acquire: refuse}); where it
	 * wakes on an acquire instead, a warm-up wakes it first
	 */
	public int warm(long classSize, int count) {
		int classIndex = this.ladder.exactIndexOf(classSize);
		if (classIndex < 0) {
			throw new IllegalArgumentException("cannot warm " + classSize + " bytes: not a size class of pool '"
					+ this.name + "', whose classes are " + this.ladder);
		}
		if (count < 0) {
			throw new IllegalArgumentException("warm count must not be negative: " + count);
		}
		checkOpen();
		this.health.check();
		this.sleep.beforeUse("a warm-up");
		int added = this.tiers.warm(classIndex, count);
		if (this.closed.get()) {
			this.tiers.close();
			checkOpen();
		}
		if (added > 0) {
			this.reservation.grew();
		}
		return added;
	}

	@Override
	public BufferShelf shelf(int maxPerKey) {
		checkOpen();
		return this.tiers.shelf(this, this.leaks, maxPerKey);
	}

	/**
	 * {@inheritDoc} Shelves first, then blocks above the top class, free segments and the free lists' buffers;
	 * every cached buffer is within reach, whichever thread closed it and whatever that thread does now.
	 */
	@Override
	public long trim(long keepBytes) {
		if (keepBytes < 0) {
			throw new IllegalArgumentException("trim target must not be negative: " + keepBytes + " bytes");
		}
		checkOpen();
		this.upkeep.giveBackLate();
		long released = this.tiers.trim(keepBytes, 0);
		this.recorder.trimmed(keepBytes, released, false);
		this.supply.memoryReturned();
		return released;
	}

	/** Releases, and answers, the bytes cached unused longer than {@code idle-trim-after}, as the maintenance does. */
	public long trimIdle() {
		return this.upkeep.trimIdle();
	}

	/**
	 * {@inheritDoc} Over fixed segments (a device without virtual memory management, or the host backend configured
	 * so) only a pool lending nothing sleeps.
	 */
	@Override
	public SleepStatus.Sleep sleep(SleepMode mode) {
		Objects.requireNonNull(mode, "mode");
		checkOpen();
		return this.sleep.sleep(mode);
	}

	@Override
	public SleepStatus.Wake wake() {
		checkOpen();
		return this.sleep.wake("a call");
	}

	@Override
	public SleepStatus sleepStatus() {
		return this.sleep.status();
	}

	/** Before a use of one of the pool's lent buffers: wakes the pool where it sleeps, or refuses. */
	void beforeUse() {
		this.sleep.beforeUse("a use of a lent buffer");
	}

	/**
	 * Before an acquire maps memory while the pool sleeps, one begun before the sleep: wakes the pool, or refuses, as an
	 * acquire begun while it sleeps does.
	 */
	private void beforeMapping() {
		this.sleep.beforeUse("an acquire");
	}

	/** Begins a copy or a fill of one of the pool's lent buffers, which a sleep waits for: see {@link #beforeUse}. */
	void beginUse() {
		this.sleep.beginUse("a use of a lent buffer");
	}

	/** Ends a use {@link #beginUse} began, on the same thread. */
	void endUse() {
		this.sleep.endUse();
	}

	@Override
	public PoolStatistics statistics() {
		return this.tiers.statistics(this.name, kind());
	}

	/** The settings the pool was made with. */
	public PoolConfig config() {
		return this.config;
	}

	/** What the pool recorded of its use: the sizes requested, and each class's use and misses. */
	public PoolUsage usage() {
		return this.counters.usage(statistics(), this.ladder);
	}

	@Override
	public Optional<PoolSnapshot> snapshot() {
		return Optional.of(this.tiers.snapshot(this.name, this.upkeep.pendingBlocks(), this.recorder.lends()));
	}

	@Override
	public Optional<PoolHistory> history() {
		return Optional.of(this.recorder.read());
	}

	/** Bytes cached in all tiers: exact when no thread is acquiring or releasing, a recent value otherwise. */
	@Override
	public long cachedBytes() {
		return this.tiers.cachedBytes();
	}

	@Override
	public long reservedBytes() {
		return this.tiers.reservedBytes();
	}

	@Override
	public void addListener(PoolListener listener) {
		this.reservation.addListener(listener);
	}

	@Override
	public void observeWith(MemoryObserver observer) {
		this.reservation.observeWith(observer);
	}

	@Override
	public void close() {
		if (!this.closed.compareAndSet(false, true)) {
			return;
		}
		this.upkeep.close();
		this.tiers.close();
		this.supply.memoryReturned();
		long inUse = reservedBytes();
		if (inUse > 0) {
			LOGGER.log(System.Logger.Level.WARNING, "Pool ''{0}'' closed with {1} still lent out; it goes back to "
					+ "the allocator as its buffers are closed", this.name, ByteSizes.format(inUse));
		}
	}

	@Override
	public boolean isClosed() {
		return this.closed.get();
	}

	@Override
	public String toString() {
		return "StratifiedMemoryPool[" + this.name + ", " + kind() + ", " + this.ladder.count() + " classes up to "
				+ ByteSizes.format(this.ladder.largest()) + "]";
	}

	/**
	 * Ends a lend, whatever ended it: a close, or a leak reclaimed. Its account is settled before its block goes back to
	 * its tier, from the stripe of the thread that took it, so that an admission reading what the pool lends
	 * ({@link MemorySupply}) and then what its accounts hold never finds the block free before it is back; its holder
	 * after, so that a waiter finding no memory meanwhile never takes the thread for one holding none.
	 */
	void endLend(Block block, int stripe, long requestedBytes, PoolRecorder.Lend lend, Holdings.Holder holder,
			LendAccount account) {
		if (lend != null) {
			this.recorder.returned(lend);
		}
		settle(block, requestedBytes, null, account);
		giveBack(block, stripe);
		settle(block, requestedBytes, holder, null);
		if (lend != null) {
			this.recorder.closed(lend, null);
		}
	}

	/**
	 * Ends a lend closed after stream work, settled now, as the pool counts its block held until the work completes;
	 * the block goes back then, and its close is recorded then.
	 */
	void endLendAfter(Block block, int stripe, long requestedBytes, PoolRecorder.Lend lend, Holdings.Holder holder,
			LendAccount account, GpuStream stream, GpuEvent event) {
		if (lend != null) {
			this.recorder.returned(lend);
		}
		this.upkeep.afterEvent(new Upkeep.Pending(block, stripe, stream, event, System.nanoTime(), lend));
		settle(block, requestedBytes, holder, account);
	}

	/** Ends a lend whose block the pool keeps otherwise than a close would (a shelf). */
	void endLendKept(Block block, long requestedBytes, PoolRecorder.Lend lend, Holdings.Holder holder,
			LendAccount account) {
		if (lend != null) {
			this.recorder.returned(lend);
		}
		settle(block, requestedBytes, holder, account);
		if (lend != null) {
			this.recorder.closed(lend, null);
		}
	}

	/**
	 * The one place a lend's books beyond the tiers are settled, however it ended: the bytes its thread holds, and its
	 * account's.
	 */
	private void settle(Block block, long requestedBytes, Holdings.Holder holder, LendAccount account) {
		if (holder != null) {
			holder.remove(block.size);
		}
		if (account != null) {
			account.ended(blockSize(requestedBytes));
		}
	}

	/** Puts a block back in its tier, from stripe {@code stripe}, and tells those waiting for memory. */
	void giveBack(Block block, int stripe) {
		this.tiers.giveBack(block, stripe);
		this.reservation.memoryReturned();
		this.supply.memoryReturned();
	}

	/** The capacity of the allocator's device, or 0 where it cannot tell. */
	private static long deviceBytes(MemoryAllocator allocator) {
		try {
			return allocator.memoryInfo().totalBytes();
		}
		catch (RuntimeException ex) {
			return 0;
		}
	}

	/** Advances the recency clock, as the slow paths do; tests use it to order cached buffers in time. */
	long tick() {
		return this.tiers.tick();
	}

	/**
	 * Checks a request for a {@code what} of {@code bytes}, waiting at most {@code maxWait}, before it is served.
	 * @throws IllegalArgumentException if {@code bytes} is not positive or {@code maxWait} negative
	 * @throws IllegalStateException if the pool is closed
	 */
	private void checkRequest(String what, long bytes, Duration maxWait) {
		if (bytes <= 0) {
			throw new IllegalArgumentException(what + " size must be positive: " + bytes);
		}
		if (maxWait.isNegative()) {
			throw new IllegalArgumentException("the wait for a " + what + " must not be negative: " + maxWait);
		}
		checkOpen();
		this.health.checkAcquire();
	}

	void checkOpen() {
		if (this.closed.get()) {
			throw new IllegalStateException("pool '" + this.name + "' is closed");
		}
	}

	/** What the pool offers an admission by bytes. */
	private final class Supply implements MemorySupply {

		private volatile Runnable hook;

		@Override
		public String name() {
			return StratifiedMemoryPool.this.name;
		}

		@Override
		public long blockSize(long bytes) {
			return StratifiedMemoryPool.this.blockSize(bytes);
		}

		@Override
		public long reachBytes() {
			return StratifiedMemoryPool.this.reservation.reach();
		}

		@Override
		public GpuOutOfMemoryException refuseBeyondReach(long bytes) {
			return StratifiedMemoryPool.this.reservation.refuseBeyondReach(bytes);
		}

		@Override
		public long lentBytes(boolean settleFirst) {
			if (settleFirst && !isClosed()) {
				StratifiedMemoryPool.this.upkeep.giveBackLate();
			}
			Tiers tiers = StratifiedMemoryPool.this.tiers;
			return Math.max(0, tiers.reservedBytes() - tiers.cachedBytes());
		}

		@Override
		public synchronized void whenMemoryReturns(Runnable hook) {
			Runnable before = this.hook;
			this.hook = (before == null) ? hook : () -> {
				before.run();
				hook.run();
			};
		}

		@Override
		public boolean isClosed() {
			return StratifiedMemoryPool.this.isClosed();
		}

		@Override
		public LeakDetection leakDetection() {
			return StratifiedMemoryPool.this.leaks.level();
		}

		@Override
		public PooledBuffer acquire(long bytes, Duration maxWait, LendAccount account) {
			return StratifiedMemoryPool.this.acquire(bytes, maxWait, Objects.requireNonNull(account, "account"));
		}

		void memoryReturned() {
			Runnable hook = this.hook;
			if (hook != null) {
				hook.run();
			}
		}

	}

}
