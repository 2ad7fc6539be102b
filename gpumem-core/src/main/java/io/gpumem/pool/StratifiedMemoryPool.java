package io.gpumem.pool;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;
import io.gpumem.memory.OutOfMemoryDiagnostic;
import io.gpumem.observation.MemoryObserver;
import io.gpumem.observation.MemoryOperation;
import io.gpumem.stream.GpuEvent;
import io.gpumem.stream.GpuStream;
import io.gpumem.stream.StreamOrder;

/**
 * A pool of buffers over any {@link MemoryAllocator}, whose memory it holds in segments and lends in
 * size classes.
 * <p>
 * <b>Segments.</b> Every block up to the top class is cut from segments the pool allocates in steps of
 * {@link PoolConfig#segmentBytes()} ({@link Arena}): best fit, split when larger than asked, coalesced
 * with its free neighbours when freed, so that memory freed by one size serves any other. A segment goes
 * back to the allocator only whole (by a trim, or beyond {@code maxCachedBytes}), so a trim reports
 * exactly what the allocator got back. Over a {@linkplain MemoryAllocator#streamOrdered() stream-ordered}
 * allocator, whose pool does its own carving, every block is a segment of its own.
 * Requests up to {@value #FRONT_LIMIT} bytes round up to their class; larger ones are cut to their size
 * (to {@value Arena#ALIGNMENT} bytes) and counted in their class. A miss is a request that made the pool
 * allocate.
 * <p>
 * <b>Free lists.</b> Closed buffers of classes up to {@value #FRONT_LIMIT} bytes stay cached for their
 * class, so that the hot small sizes are served without the arena's lock; larger ones go back to the
 * segments at once. Cached buffers lie in free lists striped so that request threads rarely meet on a
 * lock ({@link FreeLists}); a thread takes from its own stripe first and from the others before it
 * allocates, so a buffer closed on one thread serves the next request on any other. Before it
 * allocates, a request also takes a cached buffer of the next class up where that class is at most a
 * quarter larger (the default ladder's step is a fifth): in the statistics it is a hit of the class
 * asked for, and the buffer goes back to its own class. Nothing is cached per thread: every cached
 * byte is one that a trim, the pressure handler or an out-of-memory retry can free, from any thread,
 * at once.
 * <p>
 * <b>Caps.</b> At most {@code maxCachedBuffers} per class are kept in the free lists, a buffer closed
 * beyond them goes back to the segments; when more than {@code maxCachedBytes} are cached, free segments
 * go back to the allocator.
 * <p>
 * <b>Requests above the top class</b> take the smallest cached block that fits them, if it is at most
 * {@link LargeBlocks#REUSE_MARGIN} larger, and otherwise a new block of their exact size; closed, such a
 * block is cached within {@code maxCachedBytes} ({@link LargeBlocks}), so that a service repeating a
 * large request allocates once. Trims release these blocks before the classes' buffers, oldest first.
 * <p>
 * <b>Out of memory.</b> When the allocator refuses, the pool has memory freed (by its listeners, or by
 * trimming itself: first what the request needs, then everything) and retries, {@code oomRetries} times
 * ({@link OutOfMemoryRetry}), before throwing a {@link GpuOutOfMemoryException} that adds the pool's
 * figures to the allocator's. A failed acquire changes no count but {@code misses} and
 * {@code allocationFailures}.
 * <p>
 * <b>Waiting for memory.</b> With a wait ({@code maxWait}, or {@link #acquire(long, Duration)}), an acquire
 * the allocator still refuses after the retries waits, in line behind earlier waiters ({@link MemoryWaiters}),
 * for buffers to come back, and fails only when its wait runs out. A request larger than the device or
 * the budget fails at once.
 * <p>
 * <b>Releasing after a stream.</b> {@link PooledBuffer#closeAfter(GpuStream)} records an event on the
 * stream; the block stays lent until the event completes ({@link PendingReleases}), and is looked at
 * again on misses, trims and maintenance runs.
 * <p>
 * <b>Leaks</b> are watched as {@link LeakDetection} says ({@link LeakWatch}) and reclaimed by the
 * maintenance, misses and trims.
 * <p>
 * <b>Trimming.</b> {@link #trim(long)} releases cached memory down to a byte target: the large blocks,
 * oldest first, then free segments, then the free lists' least recently used buffers back to the
 * segments and the segments they free; with {@code idleTrimAfter} set, buffers and segments unused that
 * long are released in the background.
 * Recency is kept by a clock that ticks on every slow path and every maintenance run, so buffers cached
 * between two ticks are ordered by stack position, not by time.
 * <p>
 * <b>Statistics</b> take no lock a request thread takes, change nothing, and cost the same however many
 * threads use the pool: {@link #statistics()} reads the counts of the stripes and the ledger, and the
 * single figures ({@link #usedBytes()}, {@link #cachedBytes()}, {@link #hits()}, …) read a few counters.
 */
public final class StratifiedMemoryPool implements MemoryPool, AutoCloseable {

	private static final System.Logger LOGGER = System.getLogger(StratifiedMemoryPool.class.getName());

	private static final long MAINTENANCE_PERIOD_NANOS = 1_000_000_000L;

	/** A miss may take a cached block of the next class up when that is at most this many times larger. */
	private static final double MAX_UPGRADE = 1.25;

	/** Classes up to this size keep closed buffers in the free lists; larger ones give them back to the arena. */
	static final long FRONT_LIMIT = 256L << 10;

	private final String name;

	private final MemoryAllocator allocator;

	private final SizeClassLadder ladder;

	private final long[] maxCachedBuffers;

	/** Per class, whether a miss may take a cached block of the next class. */
	private final boolean[] upgrades;

	/** Per class, whether closed buffers are cached in the free lists rather than given back to the arena. */
	private final boolean[] front;

	private final long maxCachedBytes;

	private final LongAdder missNanos = new LongAdder();

	private final long idleTrimNanos;

	private final Duration maxWait;

	private final MemoryWaiters waiters = new MemoryWaiters();

	private final FreeLists freeLists;

	private final LargeBlocks large = new LargeBlocks();

	private final Ledger ledger;

	private final OutOfMemoryRetry retry;

	private final LeakWatch leaks;

	private final PendingReleases pending = new PendingReleases();

	private final List<PoolListener> listeners = new CopyOnWriteArrayList<>();

	private volatile MemoryObserver observer = MemoryObserver.NONE;

	private final Object trimLock = new Object();

	private final ScheduledFuture<?> maintenance;

	private volatile long clock = System.nanoTime();

	private volatile boolean closed;

	/**
	 * A pool lending memory of {@code allocator}, warmed as the configuration says.
	 * @throws GpuOutOfMemoryException if the warm-up cannot be allocated (nothing is left reserved)
	 */
	public StratifiedMemoryPool(MemoryAllocator allocator, PoolConfig config) {
		this.allocator = Objects.requireNonNull(allocator, "allocator");
		this.name = config.name();
		this.ladder = config.sizeClasses();
		int classes = this.ladder.count();
		this.maxCachedBuffers = new long[classes];
		for (int i = 0; i < classes; i++) {
			this.maxCachedBuffers[i] = config.maxCachedBuffers().getOrDefault(this.ladder.size(i), Integer.MAX_VALUE);
		}
		this.front = new boolean[classes];
		for (int i = 0; i < classes; i++) {
			this.front[i] = this.ladder.size(i) <= FRONT_LIMIT;
		}
		this.upgrades = new boolean[classes];
		for (int i = 0; i + 1 < classes; i++) {
			this.upgrades[i] = this.front[i + 1] && this.ladder.size(i + 1) <= MAX_UPGRADE * this.ladder.size(i);
		}
		this.maxCachedBytes = config.maxCachedBytes();
		this.idleTrimNanos = (config.idleTrimAfter() != null) ? config.idleTrimAfter().toNanos() : 0;
		this.maxWait = config.maxWait();
		this.freeLists = new FreeLists(classes, config.stripes());
		this.ledger = new Ledger(allocator, classes, allocator.streamOrdered() ? Arena.ALIGNMENT : config.segmentBytes(),
				() -> this.clock);
		this.retry = new OutOfMemoryRetry(config.oomRetries());
		this.leaks = new LeakWatch(config.leakDetection());
		long start = System.nanoTime();
		try {
			config.warm().forEach((size, count) -> warm(size, count));
		}
		catch (RuntimeException ex) {
			close();
			throw ex;
		}
		LOGGER.log(System.Logger.Level.INFO, () -> String.format(
				"Pool '%s' (%s) started: %d size classes %s to %s, %s warmed in %d ms, at most %s cached", this.name,
				allocator.kind(), classes, ByteSizes.format(this.ladder.size(0)),
				ByteSizes.format(this.ladder.largest()), ByteSizes.format(this.ledger.reservedBytes()),
				TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), ByteSizes.format(this.maxCachedBytes)));
		long period = (this.idleTrimNanos > 0)
				? Math.min(MAINTENANCE_PERIOD_NANOS, Math.max(1_000_000L, this.idleTrimNanos / 4))
				: MAINTENANCE_PERIOD_NANOS;
		this.maintenance = Maintenance.schedule(this::maintain, period);
	}

	@Override
	public String name() {
		return this.name;
	}

	@Override
	public MemoryKind kind() {
		return this.allocator.kind();
	}

	@Override
	public void addListener(PoolListener listener) {
		this.listeners.add(Objects.requireNonNull(listener, "listener"));
	}

	/** Tells {@code observer} of every miss from now on: the reserve from the allocator, with its retries and wait. */
	public void observeWith(MemoryObserver observer) {
		this.observer = Objects.requireNonNull(observer, "observer");
	}

	/** The allocator this pool draws on. */
	public MemoryAllocator allocator() {
		return this.allocator;
	}

	/** The pool's size classes. */
	public SizeClassLadder sizeClasses() {
		return this.ladder;
	}

	/**
	 * The bytes a request of {@code bytes} takes: up to {@value #FRONT_LIMIT} bytes its class, above that
	 * and up to the top class its size, each rounded up to {@value Arena#ALIGNMENT} bytes in a segment;
	 * above the top class its size.
	 */
	public long blockSize(long bytes) {
		int classIndex = this.ladder.indexOf(bytes);
		return (classIndex < 0) ? bytes : Arena.spanSize(blockSize(classIndex, bytes));
	}

	/** What a request of {@code bytes} in class {@code classIndex} asks of the arena: its class, or its size. */
	private long blockSize(int classIndex, long bytes) {
		return this.front[classIndex] ? this.ladder.size(classIndex) : bytes;
	}

	/**
	 * Lends a buffer of {@code bytes} bytes, of {@link #blockSize(long)} behind the scenes, waiting for
	 * memory at most the configured {@code maxWait}.
	 * @throws IllegalArgumentException if {@code bytes} is not positive
	 * @throws IllegalStateException if the pool is closed
	 * @throws GpuOutOfMemoryException if no memory could be had, even after trimming and waiting
	 */
	public PooledBuffer acquire(long bytes) {
		return acquire(bytes, this.maxWait);
	}

	/**
	 * Lends a buffer of {@code bytes} bytes, as {@link #acquire(long)} does, waiting for memory to be
	 * returned at most {@code maxWait} when there is none.
	 * @throws IllegalArgumentException if {@code bytes} is not positive or {@code maxWait} negative
	 * @throws IllegalStateException if the pool is closed
	 * @throws GpuOutOfMemoryException if no memory could be had, even after trimming and waiting
	 */
	public PooledBuffer acquire(long bytes, Duration maxWait) {
		if (bytes <= 0) {
			throw new IllegalArgumentException("buffer size must be positive: " + bytes);
		}
		if (maxWait.isNegative()) {
			throw new IllegalArgumentException("the wait for memory must not be negative: " + maxWait);
		}
		checkOpen();
		int classIndex = this.ladder.indexOf(bytes);
		ThreadState thread = ThreadState.current();
		int home = thread.stripe;
		if (classIndex < 0) {
			return acquireLarge(bytes, maxWait, thread, home);
		}
		Block block;
		if (this.front[classIndex]) {
			block = this.freeLists.take(classIndex, bytes, home);
			if (block != null) {
				return this.leaks.lend(this, block, bytes, thread, home, false);
			}
		}
		else {
			this.freeLists.countRequest(classIndex, bytes, home);
		}
		long size = blockSize(classIndex, bytes);
		block = miss(classIndex, size, home);
		boolean allocated = block == null;
		if (allocated) {
			block = allocate(classIndex, size, maxWait.toNanos(), home);
		}
		this.ledger.countUse(classIndex, allocated);
		return this.leaks.lend(this, block, bytes, thread, home, allocated);
	}

	/**
	 * Lends a buffer of {@code bytes} bytes, as {@link #acquire(long)} does, ordered on {@code stream}: over a
	 * stream-ordered allocator a block allocated for it is ready in that stream's order, with no wait on the
	 * host ({@link StreamOrder}); use the buffer on that stream.
	 * @throws IllegalArgumentException if {@code bytes} is not positive
	 * @throws IllegalStateException if the pool is closed
	 * @throws GpuOutOfMemoryException if no memory could be had, even after trimming and waiting
	 */
	public PooledBuffer acquire(long bytes, GpuStream stream) {
		try (StreamOrder.Binding ordered = StreamOrder.bind(stream)) {
			return acquire(bytes, this.maxWait);
		}
	}

	/**
	 * Allocates buffers into the class of exactly {@code classSize} bytes, as far as the caps allow.
	 * @return how many buffers were added
	 * @throws IllegalArgumentException if {@code classSize} is not a size class or {@code count} is negative
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
		long room = (this.maxCachedBytes - cachedBytes()) / classSize;
		if (this.front[classIndex]) {
			room = Math.min(room, this.maxCachedBuffers[classIndex] - this.freeLists.cachedBuffers(classIndex));
		}
		int added = (int) Math.max(0, Math.min(count, room));
		if (this.front[classIndex]) {
			long stamp = tick();
			for (int i = 0; i < added; i++) {
				Block block = this.ledger.reserve(classIndex, classSize);
				if (!this.freeLists.add(block, stamp, i)) {
					this.ledger.free(block);
				}
			}
		}
		else {
			this.ledger.grow(classSize, added);
		}
		if (this.closed) {
			this.ledger.releaseSegments(Long.MAX_VALUE, Long.MAX_VALUE);
			throw closedException();
		}
		if (added > 0) {
			this.listeners.forEach((listener) -> listener.reservedMemoryGrew(this));
		}
		return added;
	}

	/**
	 * Releases cached buffers, least recently used first, until at most {@code keepBytes} stay cached.
	 * Every cached buffer is within reach, whichever thread closed it and whatever that thread does now.
	 * @return the bytes released to the allocator
	 * @throws IllegalArgumentException if {@code keepBytes} is negative
	 */
	@Override
	public long trim(long keepBytes) {
		if (keepBytes < 0) {
			throw new IllegalArgumentException("trim target must not be negative: " + keepBytes + " bytes");
		}
		checkOpen();
		releaseFinished();
		long released = 0;
		synchronized (this.trimLock) {
			long stamp = tick();
			long excess = cachedBytes() - keepBytes;
			if (excess > 0) {
				released += this.ledger.trim(this.large.removeOldest(excess), stamp);
			}
			if ((excess = cachedBytes() - keepBytes) > 0) {
				released += this.ledger.releaseSegments(excess, Long.MAX_VALUE);
			}
			for (int pass = 0; pass < 4 && (excess = cachedBytes() - keepBytes) > 0; pass++) {
				List<Block> oldest = this.freeLists.removeOldest(excess);
				if (oldest.isEmpty()) {
					break;
				}
				this.ledger.trim(oldest, stamp);
				released += this.ledger.releaseSegments(cachedBytes() - keepBytes, Long.MAX_VALUE);
			}
		}
		return released;
	}

	/**
	 * Releases the cached buffers unused for longer than the configured idle time; does nothing when
	 * idle trimming is off. The maintenance thread calls this on its own.
	 * @return the bytes released to the allocator
	 */
	public long trimIdle() {
		if (this.idleTrimNanos == 0 || this.closed) {
			return 0;
		}
		synchronized (this.trimLock) {
			long cutoff = tick() - this.idleTrimNanos;
			long released = this.ledger.trim(this.large.removeIdle(cutoff), cutoff);
			this.ledger.trim(this.freeLists.removeIdle(cutoff), cutoff);
			return released + this.ledger.releaseSegments(Long.MAX_VALUE, cutoff);
		}
	}

	@Override
	public PoolStatistics statistics() {
		int classes = this.ladder.count();
		long[] requests = new long[classes];
		long[] returns = new long[classes];
		long[] cached = new long[classes];
		this.freeLists.addCounts(requests, returns, cached);
		List<SizeClassStatistics> rows = new ArrayList<>(classes);
		long largeRequests = this.ledger.largeRequests();
		long largeMisses = this.ledger.largeMisses();
		long largeCachedBuffers = this.large.cachedBuffers();
		long largeCachedBytes = this.large.cachedBytes();
		PoolStatistics.AboveTopClass large = new PoolStatistics.AboveTopClass(largeRequests,
				Math.max(0, largeRequests - largeMisses), largeMisses, this.ledger.largeReturns(),
				Math.max(0, this.ledger.largeBuffers() - largeCachedBuffers),
				Math.max(0, this.ledger.largeBytes() - largeCachedBytes), largeCachedBuffers, largeCachedBytes);
		PoolStatistics.Segments segments = segments();
		long totalRequests = large.requests();
		long totalMisses = large.misses();
		long totalReturns = large.returns();
		long inUseBuffers = large.inUseBuffers();
		long cachedBuffers = large.cachedBuffers();
		long cachedBytes = large.cachedBytes() + segments.freeBytes();
		for (int c = 0; c < classes; c++) {
			long size = this.ladder.size(c);
			long misses = this.ledger.misses(c);
			long inUse = Math.max(0, this.ledger.reservedBuffers(c) - cached[c]);
			rows.add(new SizeClassStatistics(size, requests[c], Math.max(0, requests[c] - misses), misses, returns[c],
					inUse, cached[c]));
			totalRequests += requests[c];
			totalMisses += misses;
			totalReturns += returns[c];
			inUseBuffers += inUse;
			cachedBuffers += cached[c];
			cachedBytes += cached[c] * Arena.spanSize(size);
		}
		long reserved = this.ledger.reservedBytes();
		return new PoolStatistics(this.name, kind(), totalRequests, Math.max(0, totalRequests - totalMisses),
				totalMisses, totalReturns, Math.max(0, reserved - cachedBytes), inUseBuffers, cachedBytes,
				cachedBuffers, reserved, this.ledger.peakReservedBytes(), this.ledger.trimmedBytes(),
				this.ledger.allocationFailures(), this.leaks.leaked(), this.waiters.statistics(), rows, large,
				segments);
	}

	/** The sizes requested of this pool since it started. */
	public SizeHistogram requestSizes() {
		return this.freeLists.requestSizes();
	}

	/** What this pool recorded of its use, for {@link PoolAdvisor}. */
	public PoolHistory history() {
		List<PoolHistory.ClassUse> classes = new ArrayList<>(this.ladder.count());
		for (int c = 0; c < this.ladder.count(); c++) {
			classes.add(new PoolHistory.ClassUse(this.ladder.size(c), this.ledger.misses(c),
					this.ledger.coldMisses(c), this.ledger.peakBuffers(c)));
		}
		PoolStatistics statistics = statistics();
		return new PoolHistory(this.name, requestSizes(), classes, statistics.requests(), statistics.hits(),
				this.maxCachedBytes, statistics.peakReservedBytes());
	}

	/** Settings this pool's recorded use says would have done better, with what each predicts. */
	public PoolAdvice advice() {
		return PoolAdvisor.advise(history());
	}

	@Override
	public PoolStatistics.Segments segments() {
		Arena arena = this.ledger.arena();
		return new PoolStatistics.Segments(arena.segments(), arena.segmentBytes(), arena.freeBytes(),
				arena.largestFree());
	}

	/** Bytes cached in all classes: exact when no thread is acquiring or releasing, a recent value otherwise. */
	@Override
	public long cachedBytes() {
		return this.freeLists.cachedBytes() + this.large.cachedBytes() + this.ledger.arena().freeBytes();
	}

	@Override
	public long reservedBytes() {
		return this.ledger.reservedBytes();
	}

	@Override
	public long usedBytes() {
		return Math.max(0, this.ledger.reservedBytes() - cachedBytes());
	}

	@Override
	public long usedBuffers() {
		return Math.max(0, this.ledger.reservedBuffers() - cachedBuffers());
	}

	@Override
	public long cachedBuffers() {
		return this.freeLists.cachedBuffers() + this.large.cachedBuffers();
	}

	@Override
	public long hits() {
		return Math.max(0, this.freeLists.requests() + this.ledger.largeRequests() - this.ledger.misses());
	}

	@Override
	public long misses() {
		return this.ledger.misses();
	}

	@Override
	public long missNanos() {
		return this.missNanos.sum();
	}

	@Override
	public long maxCachedBytes() {
		return this.maxCachedBytes;
	}

	@Override
	public long trimmedBytes() {
		return this.ledger.trimmedBytes();
	}

	@Override
	public long allocationFailures() {
		return this.ledger.allocationFailures();
	}

	@Override
	public PoolStatistics.Waits memoryWaits() {
		return this.waiters.statistics();
	}

	/**
	 * Gives every cached buffer back to the allocator. Buffers still lent are reported and go back to
	 * the allocator when they are closed. Further acquires, warms and trims throw; a second close does
	 * nothing.
	 */
	@Override
	public void close() {
		synchronized (this.trimLock) {
			if (this.closed) {
				return;
			}
			this.closed = true;
		}
		if (this.maintenance != null) {
			this.maintenance.cancel(false);
		}
		this.leaks.reclaim(this.name, this::release);
		this.pending.drainAll(this::release);
		this.freeLists.close().forEach(this.ledger::free);
		this.large.close().forEach(this.ledger::free);
		this.ledger.releaseSegments(Long.MAX_VALUE, Long.MAX_VALUE);
		long inUse = this.ledger.reservedBytes();
		if (inUse > 0) {
			LOGGER.log(System.Logger.Level.WARNING, "Pool ''{0}'' closed with {1} still lent out; it goes back to "
					+ "the allocator as its buffers are closed", this.name, ByteSizes.format(inUse));
		}
	}

	/** Whether {@link #close()} has been called. */
	public boolean isClosed() {
		return this.closed;
	}

	@Override
	public String toString() {
		return "StratifiedMemoryPool[" + this.name + ", " + kind() + ", " + this.ladder.count() + " classes up to "
				+ ByteSizes.format(this.ladder.largest()) + "]";
	}

	/**
	 * Called by {@link PooledBuffer#close()}: caches the block in stripe {@code stripe} (that of the thread
	 * that acquired it), as far as the caps allow, or gives it back to the segments, and free segments
	 * beyond {@code maxCachedBytes} to the allocator. While the pool reserves no more than the caps allow,
	 * this checks nothing else.
	 */
	void release(Block block, int stripe) {
		int classIndex = block.classIndex;
		if (classIndex < 0) {
			releaseLarge(block);
			return;
		}
		boolean cache = this.front[classIndex]
				&& ((this.ledger.reservedBuffers(classIndex) <= this.maxCachedBuffers[classIndex]
						&& this.ledger.reservedBytes() <= this.maxCachedBytes)
						|| (this.freeLists.cachedBuffers(classIndex) < this.maxCachedBuffers[classIndex]
								&& this.freeLists.cachedBytes() + block.size <= this.maxCachedBytes));
		if (!this.freeLists.put(block, stripe, this.clock, cache)) {
			this.ledger.free(block);
			if (this.closed) {
				this.ledger.releaseSegments(Long.MAX_VALUE, Long.MAX_VALUE);
			}
			else if (this.ledger.reservedBytes() > this.maxCachedBytes) {
				long excess = cachedBytes() - this.maxCachedBytes;
				if (excess > 0) {
					this.ledger.releaseSegments(excess, Long.MAX_VALUE);
				}
			}
		}
		if (this.waiters.any()) {
			this.waiters.memoryReturned();
		}
	}

	/** Caches a block above the top class as far as the byte cap allows, or gives it back to the allocator. */
	private void releaseLarge(Block block) {
		this.ledger.countLargeReturn();
		if (cachedBytes() + block.size > this.maxCachedBytes || !this.large.put(block, this.clock)) {
			this.ledger.trim(List.of(block), this.clock);
		}
		if (this.waiters.any()) {
			this.waiters.memoryReturned();
		}
	}

	/** Called by {@link PooledBuffer#closeAfter(GpuStream)}: releases the block once the event completes. */
	void releaseAfter(Block block, int stripe, GpuEvent event) {
		if (event.isComplete()) {
			event.close();
			release(block, stripe);
		}
		else {
			this.pending.add(block, stripe, event);
		}
	}

	/** Advances the recency clock, as the slow paths do; tests use it to order cached buffers in time. */
	long tick() {
		long now = Math.max(System.nanoTime(), this.clock + 1);
		this.clock = now;
		return now;
	}

	/**
	 * No cached block of the class: one whose stream work has just completed, a cached block of the next
	 * class where that is at most {@value #MAX_UPGRADE} times larger, or a block of {@code size} bytes cut
	 * from the arena's free memory; null when there is none.
	 */
	private Block miss(int classIndex, long size, int home) {
		if (releaseFinished() && this.front[classIndex]) {
			Block block = this.freeLists.poll(classIndex, home);
			if (block != null) {
				return block;
			}
		}
		Block block = this.upgrades[classIndex] ? this.freeLists.poll(classIndex + 1, home) : null;
		return (block != null) ? block : this.ledger.take(classIndex, size);
	}

	/**
	 * A new block of {@code size} bytes for the class, cut from a new segment, retried after freeing
	 * memory and waited for if refused.
	 */
	private Block allocate(int classIndex, long size, long waitNanos, int home) {
		this.ledger.countMiss(classIndex);
		Block block = timedReserve(classIndex, size, waitNanos, home);
		this.listeners.forEach((listener) -> listener.reservedMemoryGrew(this));
		return block;
	}

	/**
	 * A request above the top class: a cached block that fits it within {@link LargeBlocks#REUSE_MARGIN},
	 * or a new block of its exact size.
	 */
	private PooledBuffer acquireLarge(long bytes, Duration maxWait, ThreadState thread, int home) {
		this.ledger.countLargeRequest();
		this.freeLists.countSize(bytes, home);
		Block block = this.large.take(bytes);
		boolean allocated = block == null;
		if (allocated) {
			this.ledger.countLargeMiss();
			block = timedReserve(-1, bytes, maxWait.toNanos(), home);
			this.listeners.forEach((listener) -> listener.reservedMemoryGrew(this));
		}
		return this.leaks.lend(this, block, bytes, thread, home, allocated);
	}

	private Block timedReserve(int classIndex, long size, long waitNanos, int home) {
		MemoryObserver observer = this.observer;
		MemoryObserver.Span span = (observer != MemoryObserver.NONE)
				? observer.start(new MemoryOperation(MemoryOperation.Type.ACQUIRE, this.name, kind(), size))
				: MemoryObserver.Span.NONE;
		long start = System.nanoTime();
		Throwable failure = null;
		try {
			return reserve(classIndex, size, waitNanos, home);
		}
		catch (RuntimeException | Error ex) {
			failure = ex;
			throw ex;
		}
		finally {
			this.missNanos.add(System.nanoTime() - start);
			span.end(failure);
		}
	}

	/**
	 * A block from the allocator, with memory freed and retried as {@link OutOfMemoryRetry} does; when
	 * still refused and {@code waitNanos} allows, in line for memory to come back. With others already in
	 * line, a request that may wait does not try ahead of them.
	 */
	private Block reserve(int classIndex, long size, long waitNanos, int home) {
		tick();
		GpuOutOfMemoryException[] refusal = { null };
		Block block = (waitNanos == 0 || !this.waiters.any()) ? tryReserve(classIndex, size, refusal) : null;
		long start = System.nanoTime();
		boolean waits = block == null && waitNanos > 0
				&& (refusal[0] == null || !refusal[0].diagnostic().exceedsCapacity());
		if (waits) {
			block = this.waiters.await(waitNanos, () -> reserveWhileWaiting(classIndex, size, home, refusal));
		}
		if (block == null && refusal[0] == null) {
			block = tryReserve(classIndex, size, refusal);
		}
		if (block != null) {
			return block;
		}
		this.ledger.countAllocationFailure();
		this.listeners.forEach((listener) -> listener.allocationFailed(this, size));
		long cached = cachedBytes();
		OutOfMemoryDiagnostic diagnostic = refusal[0].diagnostic()
			.withPool(this.ledger.reservedBytes() - cached, cached, this.ladder.largest());
		if (waits) {
			diagnostic = diagnostic.withWait(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
		}
		throw new GpuOutOfMemoryException(diagnostic, refusal[0]);
	}

	/** A block from the allocator as {@link OutOfMemoryRetry} gets one; null, with the refusal kept, if refused. */
	private Block tryReserve(int classIndex, long size, GpuOutOfMemoryException[] refusal) {
		try {
			return this.retry.reserve(this.ledger, classIndex, size, this::makeRoom);
		}
		catch (GpuOutOfMemoryException ex) {
			refusal[0] = ex;
			return null;
		}
	}

	/** One try of a waiting acquire: a block of the class come back, or one from the allocator; null if refused. */
	private Block reserveWhileWaiting(int classIndex, long size, int home, GpuOutOfMemoryException[] refusal) {
		if (this.closed) {
			throw closedException();
		}
		Block block = (classIndex < 0) ? this.large.take(size)
				: this.front[classIndex] ? this.freeLists.poll(classIndex, home) : null;
		return (block != null) ? block : tryReserve(classIndex, size, refusal);
	}

	/**
	 * Frees memory for a refused allocation of {@code size} bytes: the listeners' way when there are
	 * any, else by trimming this pool, first by what the request needs, then entirely.
	 * @return the bytes freed
	 */
	private long makeRoom(long size, int attempt) {
		if (this.closed) {
			return 0;
		}
		releaseFinished();
		if (!this.listeners.isEmpty()) {
			long freed = 0;
			for (PoolListener listener : this.listeners) {
				freed += listener.outOfMemory(this, size, attempt);
			}
			return freed;
		}
		long cached = cachedBytes();
		if (cached == 0) {
			return 0;
		}
		long front = this.freeLists.cachedBytes();
		long released = trim((attempt == 0) ? Math.max(0, cached - size) : 0);
		return released + Math.max(0, front - this.freeLists.cachedBytes());
	}

	/**
	 * Takes back the blocks of leaked buffers and of buffers whose stream work has completed.
	 * @return whether any came back
	 */
	private boolean releaseFinished() {
		return this.leaks.reclaim(this.name, this::release) + this.pending.drain(this::release) > 0;
	}

	private void maintain() {
		try {
			tick();
			releaseFinished();
			trimIdle();
		}
		catch (RuntimeException ex) {
			LOGGER.log(System.Logger.Level.WARNING, "Maintenance of pool '" + this.name + "' failed", ex);
		}
	}

	private void checkOpen() {
		if (this.closed) {
			throw closedException();
		}
	}

	private IllegalStateException closedException() {
		return new IllegalStateException("pool '" + this.name + "' is closed");
	}

}
