package io.gpumem.pool;

import java.lang.ref.ReferenceQueue;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;
import io.gpumem.stream.GpuEvent;
import io.gpumem.stream.GpuStream;

/**
 * A pool of buffers in size classes over any {@link MemoryAllocator}: requests round up to a class and
 * are served from that class's free list when it holds a buffer, from the allocator otherwise.
 * <p>
 * <b>Hit path.</b> Each thread keeps a few closed buffers per class in a cache of its own
 * ({@link PoolConfig.Builder#threadCache}), which it reads and changes with no lock and no atomic
 * operation. Behind the thread caches, the shared free lists are striped: a thread works on a stripe of
 * its own (see {@link StripeIndex}), behind a lock no other request thread normally takes, and takes a
 * buffer from another stripe before allocating. Virtual threads use the stripes only.
 * <p>
 * <b>Caps.</b> At most {@code maxCachedBuffers} per class and {@code maxCachedBytes} in all are kept
 * cached; a buffer closed beyond them goes back to the allocator. While the pool reserves no more than
 * the caps allow, closing a buffer checks nothing else.
 * <p>
 * <b>Requests above the top class</b> go straight to the allocator at their exact size and back to it
 * on close: they are counted (as misses, in use, reserved) but never cached.
 * <p>
 * <b>Out of memory.</b> When the allocator refuses, the pool releases least recently used cached
 * buffers (first what the request needs, then everything) and retries, {@code oomRetries} times, before
 * throwing a {@link GpuOutOfMemoryException} that adds the pool's figures to the allocator's. A failed
 * acquire changes no count but {@code misses} and {@code allocationFailures}.
 * <p>
 * <b>Releasing after a stream.</b> {@link PooledBuffer#closeAfter(GpuStream)} records an event on the
 * stream; the block stays lent until the event completes, and is looked at again on misses, trims,
 * statistics and maintenance runs, so that no other work can get memory a stream may still write.
 * <p>
 * <b>Listeners</b> ({@link PoolListener}) hear of misses that grew the reserved memory and take over
 * freeing memory when the allocator refuses: with one, the pool retries after whatever it freed.
 * <p>
 * <b>Trimming.</b> {@link #trim(long)} releases cached buffers, least recently used first, down to a
 * byte target; with {@code idleTrimAfter} set, buffers unused that long are released in the background.
 * A trim reaches the shared lists, the trimming thread's cache and the caches of threads that have
 * ended; it moves the pool's epoch on, and every other thread hands its cache back to the shared lists
 * at its next acquire or release.
 * Recency is kept by a clock that ticks on every slow path and every maintenance run, so buffers cached
 * between two ticks are ordered by stack position, not by time.
 */
public final class StratifiedMemoryPool implements MemoryPool, AutoCloseable {

	private static final System.Logger LOGGER = System.getLogger(StratifiedMemoryPool.class.getName());

	private static final long MAINTENANCE_PERIOD_NANOS = 1_000_000_000L;

	private static final long AFTER_CLOSE_PERIOD_NANOS = 100_000_000L;

	private final String name;

	private final MemoryAllocator allocator;

	private final SizeClassLadder ladder;

	private final long[] maxCachedBuffers;

	private final long maxCachedBytes;

	private final long idleTrimNanos;

	private final int oomRetries;

	private final LeakDetection leakDetection;

	private final Stripe[] stripes;

	private final int stripeMask;

	private final int threadCacheBuffers;

	private final long threadCacheBytes;

	private final ThreadLocal<ThreadCache> threadCache = ThreadLocal.withInitial(this::newThreadCache);

	/** The caches of the threads that used this pool and were alive when last looked at. */
	private final List<ThreadCache> threadCaches = new CopyOnWriteArrayList<>();

	/** Requests, hits and returns per class counted by the caches of threads that have ended; guarded by trimLock. */
	private final long[] endedThreadCounts;

	private final AtomicLongArray reservedBuffers;

	private final AtomicLongArray misses;

	private final AtomicLong reservedBytes = new AtomicLong();

	private final AtomicLong peakReservedBytes = new AtomicLong();

	private final AtomicLong trimmedBytes = new AtomicLong();

	private final AtomicLong largeInUseBytes = new AtomicLong();

	private final AtomicLong largeInUseBuffers = new AtomicLong();

	private final LongAdder largeRequests = new LongAdder();

	private final LongAdder largeReturns = new LongAdder();

	private final LongAdder allocationFailures = new LongAdder();

	private final LongAdder leakedBuffers = new LongAdder();

	private final BlockTable blocks = new BlockTable();

	private final ReferenceQueue<PooledBuffer> leaks = new ReferenceQueue<>();

	/** Blocks closed after stream work that may not have completed yet. */
	private final Queue<PendingRelease> pending = new ConcurrentLinkedQueue<>();

	private final List<PoolListener> listeners = new CopyOnWriteArrayList<>();

	private final Object trimLock = new Object();

	private final ScheduledFuture<?> maintenance;

	private volatile long clock = System.nanoTime();

	private volatile boolean closed;

	/** Moved on by trims and close: a thread cache whose epoch is behind flushes before it is used again. */
	private volatile int epoch;

	private volatile ScheduledFuture<?> afterClose;

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
		this.maxCachedBytes = config.maxCachedBytes();
		this.idleTrimNanos = (config.idleTrimAfter() != null) ? config.idleTrimAfter().toNanos() : 0;
		this.oomRetries = config.oomRetries();
		this.leakDetection = config.leakDetection();
		this.stripes = new Stripe[config.stripes()];
		for (int i = 0; i < this.stripes.length; i++) {
			this.stripes[i] = new Stripe(classes);
		}
		this.stripeMask = this.stripes.length - 1;
		this.threadCacheBuffers = config.threadCacheBuffers();
		this.threadCacheBytes = config.threadCacheBytes();
		this.endedThreadCounts = new long[3 * classes];
		this.reservedBuffers = new AtomicLongArray(classes);
		this.misses = new AtomicLongArray(classes);
		try {
			config.warm().forEach((size, count) -> warm(size, count));
		}
		catch (RuntimeException ex) {
			close();
			throw ex;
		}
		long period = maintenancePeriodNanos();
		this.maintenance = (period > 0) ? Maintenance.schedule(this::maintain, period) : null;
	}

	@Override
	public String name() {
		return this.name;
	}

	@Override
	public MemoryKind kind() {
		return this.allocator.kind();
	}

	/** Adds a listener told of reserved-memory growth and asked to free memory when the allocator refuses. */
	public void addListener(PoolListener listener) {
		this.listeners.add(Objects.requireNonNull(listener, "listener"));
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
	 * Lends a buffer of {@code bytes} bytes, rounded up to its size class behind the scenes.
	 * @throws IllegalArgumentException if {@code bytes} is not positive
	 * @throws IllegalStateException if the pool is closed
	 * @throws GpuOutOfMemoryException if no memory could be had, even after trimming
	 */
	public PooledBuffer acquire(long bytes) {
		if (bytes <= 0) {
			throw new IllegalArgumentException("buffer size must be positive: " + bytes);
		}
		int classIndex = this.ladder.indexOf(bytes);
		if (classIndex < 0) {
			checkOpen();
			return lend(acquireLarge(bytes), bytes, null);
		}
		ThreadCache cache = this.threadCache.get();
		if (cache == null) {
			checkOpen();
			return lend(acquireShared(classIndex, true), bytes, null);
		}
		if (cache.epoch != this.epoch) {
			flush(cache);
			checkOpen();
		}
		int id = cache.poll(classIndex);
		Block block;
		if (id >= 0) {
			block = this.blocks.get(id);
			cache.lent(block.size);
		}
		else {
			block = acquireShared(classIndex, false);
		}
		return lend(block, bytes, cache);
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
		long room = Math.min(this.maxCachedBuffers[classIndex] - cachedBuffers(classIndex),
				(this.maxCachedBytes - cachedBytes()) / classSize);
		int added = (int) Math.max(0, Math.min(count, room));
		long stamp = tick();
		for (int i = 0; i < added; i++) {
			Block block = reserve(classIndex, classSize);
			Stripe stripe = this.stripes[i & this.stripeMask];
			stripe.lock();
			try {
				if (!this.closed) {
					stripe.push(block, stamp);
					continue;
				}
			}
			finally {
				stripe.unlock();
			}
			free(block);
			throw closedException();
		}
		if (added > 0) {
			this.listeners.forEach((listener) -> listener.reservedMemoryGrew(this));
		}
		return added;
	}

	/**
	 * Releases cached buffers, least recently used first, until at most {@code keepBytes} stay cached.
	 * @return the bytes released to the allocator
	 * @throws IllegalArgumentException if {@code keepBytes} is negative
	 */
	@Override
	public long trim(long keepBytes) {
		if (keepBytes < 0) {
			throw new IllegalArgumentException("trim target must not be negative: " + keepBytes + " bytes");
		}
		checkOpen();
		reclaimLeaks();
		drainPending();
		flushCallingThread();
		long released = 0;
		synchronized (this.trimLock) {
			this.epoch++;
			reclaimEndedThreads();
			tick();
			long excess;
			for (int pass = 0; pass < 4 && (excess = cachedBytes() - keepBytes) > 0; pass++) {
				long freed = releaseOldest(excess);
				if (freed == 0) {
					break;
				}
				released += freed;
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
			this.epoch++;
			reclaimEndedThreads();
			long cutoff = tick() - this.idleTrimNanos;
			List<Block> released = new ArrayList<>();
			for (Stripe stripe : this.stripes) {
				stripe.lock();
				try {
					for (int c = 0; c < this.ladder.count(); c++) {
						Block bottom;
						while ((bottom = stripe.bottom(c)) != null && bottom.stamp <= cutoff) {
							released.add(stripe.removeBottom(c));
						}
					}
				}
				finally {
					stripe.unlock();
				}
			}
			return freeTrimmed(released);
		}
	}

	@Override
	public PoolStatistics statistics() {
		reclaimLeaks();
		drainPending();
		int classes = this.ladder.count();
		long[] requests = new long[classes];
		long[] hits = new long[classes];
		long[] returns = new long[classes];
		long[] cached = new long[classes];
		synchronized (this.trimLock) {
			reclaimEndedThreads();
			for (int c = 0; c < classes; c++) {
				requests[c] = this.endedThreadCounts[3 * c];
				hits[c] = this.endedThreadCounts[3 * c + 1];
				returns[c] = this.endedThreadCounts[3 * c + 2];
			}
			for (ThreadCache cache : this.threadCaches) {
				for (int c = 0; c < classes; c++) {
					requests[c] += cache.requests(c);
					hits[c] += cache.hits(c);
					returns[c] += cache.returns(c);
					cached[c] += cache.cached(c);
				}
			}
		}
		for (Stripe stripe : this.stripes) {
			stripe.lock();
			try {
				for (int c = 0; c < classes; c++) {
					requests[c] += stripe.requests(c);
					hits[c] += stripe.hits(c);
					returns[c] += stripe.returns(c);
					cached[c] += stripe.cached(c);
				}
			}
			finally {
				stripe.unlock();
			}
		}
		List<SizeClassStatistics> rows = new ArrayList<>(classes);
		long totalRequests = this.largeRequests.sum();
		long totalMisses = totalRequests;
		long totalReturns = this.largeReturns.sum();
		long totalHits = 0;
		long inUseBuffers = this.largeInUseBuffers.get();
		long inUseBytes = this.largeInUseBytes.get();
		long cachedBuffers = 0;
		long cachedBytes = 0;
		for (int c = 0; c < classes; c++) {
			long size = this.ladder.size(c);
			long inUse = Math.max(0, this.reservedBuffers.get(c) - cached[c]);
			rows.add(new SizeClassStatistics(size, requests[c], hits[c], this.misses.get(c), returns[c], inUse,
					cached[c]));
			totalRequests += requests[c];
			totalHits += hits[c];
			totalMisses += this.misses.get(c);
			totalReturns += returns[c];
			inUseBuffers += inUse;
			inUseBytes += inUse * size;
			cachedBuffers += cached[c];
			cachedBytes += cached[c] * size;
		}
		return new PoolStatistics(this.name, kind(), totalRequests, totalHits, totalMisses, totalReturns, inUseBytes,
				inUseBuffers, cachedBytes, cachedBuffers, this.reservedBytes.get(), this.peakReservedBytes.get(),
				this.trimmedBytes.get(), this.allocationFailures.sum(), this.leakedBuffers.sum(), rows);
	}

	/** Bytes cached in all classes, thread caches included; exact when no thread is acquiring or releasing. */
	@Override
	public long cachedBytes() {
		long bytes = sharedCachedBytes();
		for (ThreadCache cache : this.threadCaches) {
			bytes += cache.cachedBytes();
		}
		return bytes;
	}

	@Override
	public long reservedBytes() {
		return this.reservedBytes.get();
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
			this.epoch++;
		}
		if (this.maintenance != null) {
			this.maintenance.cancel(false);
		}
		reclaimLeaks();
		for (PendingRelease release; (release = this.pending.poll()) != null;) {
			release.event.close();
			releaseToSharedLists(release.block);
		}
		List<Block> cached = new ArrayList<>();
		for (Stripe stripe : this.stripes) {
			stripe.lock();
			try {
				for (int c = 0; c < this.ladder.count(); c++) {
					for (Block block = stripe.pop(c); block != null; block = stripe.pop(c)) {
						cached.add(block);
					}
				}
			}
			finally {
				stripe.unlock();
			}
		}
		cached.forEach(this::free);
		flushCallingThread();
		long inThreadCaches;
		synchronized (this.trimLock) {
			reclaimEndedThreads();
			inThreadCaches = cachedBytes();
		}
		if (inThreadCaches > 0) {
			this.afterClose = Maintenance.schedule(this::reclaimAfterClose, AFTER_CLOSE_PERIOD_NANOS);
		}
		long inUse = this.reservedBytes.get() - inThreadCaches;
		if (inUse > 0) {
			LOGGER.log(System.Logger.Level.WARNING, "Pool ''{0}'' closed with {1} still lent out; it goes back to "
					+ "the allocator as its buffers are closed", this.name, ByteSizes.format(inUse));
		}
		if (inThreadCaches > 0) {
			LOGGER.log(System.Logger.Level.DEBUG, "Pool ''{0}'' closed with {1} in the caches of running threads; "
					+ "it goes back to the allocator when those threads next use the pool or end", this.name,
					ByteSizes.format(inThreadCaches));
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
	 * Called by {@link PooledBuffer#close()}: caches the block in the calling thread's cache, or in the
	 * shared lists when that is full, as far as the caps allow. {@code origin} is the cache the block was
	 * lent from, which spares a thread-local lookup when the lending thread also closes.
	 */
	void release(Block block, ThreadCache origin) {
		int classIndex = block.classIndex;
		if (classIndex < 0) {
			this.largeReturns.increment();
			this.largeInUseBuffers.decrementAndGet();
			this.largeInUseBytes.addAndGet(-block.size);
			free(block);
			return;
		}
		releaseTo((origin != null && origin.owner == Thread.currentThread()) ? origin : this.threadCache.get(), block);
	}

	/**
	 * Caches a block of a size class in {@code cache}, the calling thread's, or in the shared lists when
	 * that is full or null, as far as the caps allow.
	 */
	private void releaseTo(ThreadCache cache, Block block) {
		int classIndex = block.classIndex;
		if (cache != null && cache.epoch != this.epoch && flush(cache)) {
			cache.countReturn(classIndex);
			free(block);
			return;
		}
		boolean withinCaps = this.reservedBuffers.get(classIndex) <= this.maxCachedBuffers[classIndex]
				&& this.reservedBytes.get() <= this.maxCachedBytes;
		if (cache != null && cache.offer(block, withinCaps, this.clock)) {
			return;
		}
		Stripe stripe = this.stripes[homeStripe()];
		stripe.lockHome();
		try {
			if (cache == null) {
				stripe.countReturn(classIndex);
			}
			if (withinCaps && !this.closed) {
				stripe.push(block, this.clock);
				return;
			}
		}
		finally {
			stripe.unlock();
		}
		releaseBeyondCaps(block, stripe);
	}

	/**
	 * Releases a block on behalf of its user (a leak reclaimed, a release after a stream), into the
	 * shared lists rather than the calling thread's cache: the calling thread may be one that never
	 * acquires, whose cache no trim would reach.
	 */
	private void releaseToSharedLists(Block block) {
		if (block.classIndex < 0) {
			release(block, null);
		}
		else {
			releaseTo(null, block);
		}
	}

	/** Called by {@link PooledBuffer#closeAfter(GpuStream)}: releases the block once the event completes. */
	void releaseAfter(Block block, GpuEvent event) {
		if (event.isComplete()) {
			event.close();
			release(block, null);
		}
		else {
			this.pending.add(new PendingRelease(block, event));
		}
	}

	/** Advances the recency clock, as the slow paths do; tests use it to order cached buffers in time. */
	long tick() {
		long now = Math.max(System.nanoTime(), this.clock + 1);
		this.clock = now;
		return now;
	}

	/**
	 * Wraps a block in a buffer for its user, watched for leaks: at level {@code paranoid} always, at
	 * {@code simple} one acquire in {@value ThreadCache#LEAK_SAMPLING_INTERVAL} per thread and every
	 * buffer lent without a thread cache.
	 */
	private PooledBuffer lend(Block block, long bytes, ThreadCache cache) {
		PooledBuffer buffer = new PooledBuffer(this, block, bytes, cache);
		if (this.leakDetection != LeakDetection.DISABLED
				&& (this.leakDetection == LeakDetection.PARANOID || cache == null || cache.sampleLeak())) {
			watch(buffer, block, bytes);
		}
		return buffer;
	}

	private void watch(PooledBuffer buffer, Block block, long bytes) {
		Throwable site = (this.leakDetection == LeakDetection.PARANOID)
				? new Throwable("buffer of " + bytes + " bytes acquired here") : null;
		block.leak = new Block.Leak(buffer, block, this.leaks, site);
	}

	/** Takes a block of the class from the shared lists, the calling thread's stripe first, or allocates one. */
	private Block acquireShared(int classIndex, boolean countRequest) {
		int home = homeStripe();
		Stripe stripe = this.stripes[home];
		Block block;
		stripe.lockHome();
		try {
			if (countRequest) {
				stripe.countRequest(classIndex);
			}
			block = stripe.pop(classIndex);
			if (block != null) {
				stripe.countHit(classIndex);
			}
		}
		finally {
			stripe.unlock();
		}
		return (block != null) ? block : acquireMissing(classIndex, home);
	}

	/** The calling thread's new cache, or null where threads get none: thread caches off, or a virtual thread. */
	private ThreadCache newThreadCache() {
		Thread thread = Thread.currentThread();
		if (this.threadCacheBuffers == 0 || VirtualThreads.isVirtual(thread)) {
			return null;
		}
		int current = this.epoch;
		ThreadCache cache = new ThreadCache(thread, this.ladder.count(), this.threadCacheBuffers,
				this.threadCacheBytes, this.closed ? current - 1 : current);
		this.threadCaches.add(cache);
		return cache;
	}

	/** Flushes the calling thread's cache, if it has one, so that a trim or close reaches its blocks. */
	private void flushCallingThread() {
		ThreadCache own = this.threadCache.get();
		if (own != null) {
			flush(own);
		}
	}

	/**
	 * Hands the blocks of the calling thread's cache back to the shared lists, or to the allocator once
	 * the pool is closed, and brings the cache up to the pool's epoch.
	 * @return whether the pool is closed
	 */
	private boolean flush(ThreadCache cache) {
		int current = this.epoch;
		boolean wasClosed = this.closed;
		cache.epoch = wasClosed ? current - 1 : current;
		return returnToSharedLists(cache);
	}

	/**
	 * Moves the blocks of a thread cache whose owner is the calling thread or has ended to the calling
	 * thread's stripe, or to the allocator once the pool is closed.
	 * @return whether the pool is closed
	 */
	private boolean returnToSharedLists(ThreadCache cache) {
		List<Block> drained = new ArrayList<>();
		cache.drain((id, stamp) -> {
			Block block = this.blocks.get(id);
			block.stamp = stamp;
			drained.add(block);
		});
		if (!drained.isEmpty()) {
			Stripe stripe = this.stripes[homeStripe()];
			stripe.lock();
			try {
				if (!this.closed) {
					drained.forEach(block -> stripe.push(block, block.stamp));
					return false;
				}
			}
			finally {
				stripe.unlock();
			}
		}
		drained.forEach(this::free);
		return this.closed;
	}

	/**
	 * Takes over the caches of threads that have ended: their blocks go to the shared lists (to the
	 * allocator once the pool is closed) and their counts to the pool's. Called holding trimLock.
	 */
	private void reclaimEndedThreads() {
		for (ThreadCache cache : this.threadCaches) {
			if (cache.owner.isAlive()) {
				continue;
			}
			this.threadCaches.remove(cache);
			for (int c = 0; c < this.ladder.count(); c++) {
				this.endedThreadCounts[3 * c] += cache.requests(c);
				this.endedThreadCounts[3 * c + 1] += cache.hits(c);
				this.endedThreadCounts[3 * c + 2] += cache.returns(c);
			}
			returnToSharedLists(cache);
		}
	}

	/** After close: frees what running threads still cached as they end, until nothing is left. */
	private void reclaimAfterClose() {
		synchronized (this.trimLock) {
			reclaimEndedThreads();
			if (cachedBytes() == 0 && this.afterClose != null) {
				this.afterClose.cancel(false);
			}
		}
	}

	private long sharedCachedBytes() {
		long bytes = 0;
		for (Stripe stripe : this.stripes) {
			bytes += stripe.cachedBytes;
		}
		return bytes;
	}

	private Block acquireMissing(int classIndex, int home) {
		for (int i = 1; i < this.stripes.length; i++) {
			Block block = popCounted(this.stripes[(home + i) & this.stripeMask], classIndex);
			if (block != null) {
				return block;
			}
		}
		if (drainPending() > 0) {
			Block block = popCounted(this.stripes[home], classIndex);
			if (block != null) {
				return block;
			}
		}
		this.misses.incrementAndGet(classIndex);
		reclaimLeaks();
		Block block = allocateWithRetry(classIndex, this.ladder.size(classIndex));
		this.listeners.forEach((listener) -> listener.reservedMemoryGrew(this));
		return block;
	}

	/** Takes a cached block of the class from a stripe, counting a hit, or answers null. */
	private static Block popCounted(Stripe stripe, int classIndex) {
		stripe.lock();
		try {
			Block block = stripe.pop(classIndex);
			if (block != null) {
				stripe.countHit(classIndex);
			}
			return block;
		}
		finally {
			stripe.unlock();
		}
	}

	private Block acquireLarge(long bytes) {
		this.largeRequests.increment();
		Block block = allocateWithRetry(-1, bytes);
		this.largeInUseBuffers.incrementAndGet();
		this.largeInUseBytes.addAndGet(bytes);
		this.listeners.forEach((listener) -> listener.reservedMemoryGrew(this));
		return block;
	}

	private Block allocateWithRetry(int classIndex, long size) {
		tick();
		for (int attempt = 0;; attempt++) {
			try {
				return reserve(classIndex, size);
			}
			catch (GpuOutOfMemoryException ex) {
				if (attempt >= this.oomRetries || this.closed || makeRoom(size, attempt) == 0) {
					this.allocationFailures.increment();
					this.listeners.forEach((listener) -> listener.allocationFailed(this, size));
					long cached = cachedBytes();
					throw new GpuOutOfMemoryException(ex.diagnostic()
						.withPool(this.reservedBytes.get() - cached, cached, this.ladder.largest()), ex);
				}
			}
			catch (RuntimeException ex) {
				this.allocationFailures.increment();
				throw ex;
			}
		}
	}

	/**
	 * Frees memory for a refused allocation of {@code size} bytes: the listeners' way when there are
	 * any, else by trimming this pool, first by what the request needs, then entirely.
	 * @return the bytes freed
	 */
	private long makeRoom(long size, int attempt) {
		drainPending();
		if (!this.listeners.isEmpty()) {
			long freed = 0;
			for (PoolListener listener : this.listeners) {
				freed += listener.outOfMemory(this, size, attempt);
			}
			return freed;
		}
		long cached = cachedBytes();
		return (cached == 0) ? 0 : trim((attempt == 0) ? Math.max(0, cached - size) : 0);
	}

	/**
	 * Releases the blocks whose stream work has completed, in the order they were closed.
	 * @return how many were released
	 */
	private int drainPending() {
		int released = 0;
		for (Iterator<PendingRelease> it = this.pending.iterator(); it.hasNext();) {
			PendingRelease release = it.next();
			if (release.event.isComplete() && this.pending.remove(release)) {
				release.event.close();
				releaseToSharedLists(release.block);
				released++;
			}
		}
		return released;
	}

	private Block reserve(int classIndex, long size) {
		Allocation allocation = this.allocator.allocate(size);
		Block block = new Block(allocation, classIndex);
		block.id = this.blocks.add(block);
		if (classIndex >= 0) {
			this.reservedBuffers.incrementAndGet(classIndex);
		}
		this.peakReservedBytes.accumulateAndGet(this.reservedBytes.addAndGet(size), Math::max);
		return block;
	}

	private void free(Block block) {
		this.blocks.remove(block.id);
		if (block.classIndex >= 0) {
			this.reservedBuffers.decrementAndGet(block.classIndex);
		}
		this.reservedBytes.addAndGet(-block.size);
		this.allocator.free(block.allocation);
	}

	private long freeTrimmed(List<Block> released) {
		long bytes = 0;
		for (Block block : released) {
			free(block);
			bytes += block.size;
		}
		this.trimmedBytes.addAndGet(bytes);
		return bytes;
	}

	private void releaseBeyondCaps(Block block, Stripe stripe) {
		int classIndex = block.classIndex;
		if (!this.closed && cachedBuffers(classIndex) < this.maxCachedBuffers[classIndex]
				&& cachedBytes() + block.size <= this.maxCachedBytes) {
			stripe.lock();
			try {
				if (!this.closed) {
					stripe.push(block, this.clock);
					return;
				}
			}
			finally {
				stripe.unlock();
			}
		}
		if (this.closed) {
			free(block);
		}
		else {
			freeTrimmed(List.of(block));
		}
	}

	/**
	 * Releases about {@code bytes} of the least recently cached blocks: finds the stamp below which they
	 * lie, then takes blocks from the bottoms of the stacks up to it.
	 */
	private long releaseOldest(long bytes) {
		List<long[]> stamped = new ArrayList<>();
		for (Stripe stripe : this.stripes) {
			stripe.lock();
			try {
				for (int c = 0; c < this.ladder.count(); c++) {
					stripe.forEachCached(c, block -> stamped.add(new long[] { block.stamp, block.size }));
				}
			}
			finally {
				stripe.unlock();
			}
		}
		stamped.sort((a, b) -> Long.compare(a[0], b[0]));
		long cutoff = Long.MIN_VALUE;
		long covered = 0;
		for (long[] entry : stamped) {
			if (covered >= bytes) {
				break;
			}
			cutoff = entry[0];
			covered += entry[1];
		}
		long budget = bytes;
		List<Block> released = new ArrayList<>();
		for (Stripe stripe : this.stripes) {
			stripe.lock();
			try {
				for (int c = 0; c < this.ladder.count() && budget > 0; c++) {
					Block bottom;
					while (budget > 0 && (bottom = stripe.bottom(c)) != null && bottom.stamp <= cutoff) {
						released.add(stripe.removeBottom(c));
						budget -= bottom.size;
					}
				}
			}
			finally {
				stripe.unlock();
			}
		}
		return freeTrimmed(released);
	}

	private long cachedBuffers(int classIndex) {
		long count = 0;
		for (Stripe stripe : this.stripes) {
			count += stripe.cached(classIndex);
		}
		return count;
	}

	/** Returns the blocks of buffers that became unreachable without close to the pool, and reports them. */
	private void reclaimLeaks() {
		Block.Leak leak;
		while ((leak = (Block.Leak) this.leaks.poll()) != null) {
			Block block = leak.block;
			if (!Block.LEAK.compareAndSet(block, leak, null)) {
				continue;
			}
			this.leakedBuffers.increment();
			String message = "LEAK: a buffer of " + leak.requestedBytes + " bytes from pool '" + this.name
					+ "' became unreachable without close(); its memory was reclaimed."
					+ ((leak.site == null) ? " Set leak detection to paranoid to see where it was acquired." : "");
			LOGGER.log(System.Logger.Level.WARNING, message, leak.site);
			releaseToSharedLists(block);
		}
	}

	private void maintain() {
		try {
			tick();
			reclaimLeaks();
			drainPending();
			synchronized (this.trimLock) {
				reclaimEndedThreads();
			}
			trimIdle();
		}
		catch (RuntimeException ex) {
			LOGGER.log(System.Logger.Level.WARNING, "Maintenance of pool '" + this.name + "' failed", ex);
		}
	}

	private long maintenancePeriodNanos() {
		long period = 0;
		if (this.idleTrimNanos > 0) {
			period = Math.max(1_000_000L, this.idleTrimNanos / 4);
		}
		if (this.leakDetection != LeakDetection.DISABLED || this.threadCacheBuffers > 0) {
			period = (period == 0) ? MAINTENANCE_PERIOD_NANOS : Math.min(period, MAINTENANCE_PERIOD_NANOS);
		}
		return period;
	}

	private int homeStripe() {
		return StripeIndex.current() & this.stripeMask;
	}

	private void checkOpen() {
		if (this.closed) {
			throw closedException();
		}
	}

	private IllegalStateException closedException() {
		return new IllegalStateException("pool '" + this.name + "' is closed");
	}

	private record PendingRelease(Block block, GpuEvent event) {
	}

}
