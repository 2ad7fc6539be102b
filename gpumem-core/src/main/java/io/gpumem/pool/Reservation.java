package io.gpumem.pool;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.GpuRetryOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;
import io.gpumem.memory.OutOfMemoryDiagnostic;
import io.gpumem.observation.MemoryObserver;
import io.gpumem.observation.MemoryOperation;
import io.gpumem.pool.arena.Block;
import io.gpumem.pool.diagnostics.PoolRecorder;
import io.gpumem.pool.recovery.Holdings;
import io.gpumem.pool.recovery.MemorySource;
import io.gpumem.pool.recovery.OutOfMemoryChain;
import io.gpumem.pool.recovery.Refusal;

/**
 * The one way a pool gets memory its tiers do not hold, observed as one span: through its {@link OutOfMemoryChain},
 * to which it is the {@link MemorySource}. It frees memory for a retry by the pool's listeners, which decide what
 * each attempt frees (the pressure handler's out-of-memory chain), or where they free nothing by trimming the
 * tiers; it refuses at once a request larger than the device or the budget; and it fails with the allocator's
 * figures and the pool's, which it tells the listeners.
 */
final class Reservation implements MemorySource {

	private static final System.Logger LOGGER = System.getLogger(StratifiedMemoryPool.class.getName());

	/** How many of the largest holders an out-of-memory failure names. */
	private static final int TOP_HOLDERS = 5;

	private final MemoryPool pool;

	private final MemoryAllocator allocator;

	private final Tiers tiers;

	private final Upkeep upkeep;

	private final PoolCounters counters;

	private final long largestClass;

	private final PoolRecorder recorder;

	private final OutOfMemoryChain<Block> chain;

	private final List<PoolListener> listeners = new CopyOnWriteArrayList<>();

	private volatile MemoryObserver observer = MemoryObserver.NONE;

	/** The most bytes a request could ever be given, once read from the allocator: its device's or its budget's. */
	private volatile long reach = -1;

	/**
	 * {@code pool}: the pool whose listeners are told, by name, kind and figures, never called back; {@code holdings}:
	 * its threads' memory, of which one is told to give way where all wait, or null for none.
	 */
	Reservation(MemoryPool pool, MemoryAllocator allocator, PoolConfig config, Tiers tiers, Upkeep upkeep,
			PoolCounters counters, PoolRecorder recorder, Holdings holdings) {
		this.pool = pool;
		this.allocator = allocator;
		this.recorder = recorder;
		this.tiers = tiers;
		this.upkeep = upkeep;
		this.counters = counters;
		this.largestClass = config.sizeClasses().largest();
		this.chain = new OutOfMemoryChain<>(pool.name(), this, counters, config.oomRetries(), holdings);
	}

	void addListener(PoolListener listener) {
		this.listeners.add(Objects.requireNonNull(listener, "listener"));
	}

	void observeWith(MemoryObserver observer) {
		this.observer = Objects.requireNonNull(observer, "observer");
	}

	/**
	 * Tells the listeners that the pool reserved more memory: news, after the memory was had, so that one that fails
	 * loses no block the acquire holds.
	 */
	void grew() {
		tellEach((listener) -> listener.reservedMemoryGrew(this.pool));
	}

	/** Tells each of the pool's listeners {@code news} of what has happened; one that fails is logged, and hides nothing. */
	void tellEach(Consumer<PoolListener> news) {
		for (PoolListener listener : this.listeners) {
			try {
				news.accept(listener);
			}
			catch (RuntimeException ex) {
				LOGGER.log(System.Logger.Level.WARNING, "A listener of pool '" + this.pool.name() + "' failed", ex);
			}
		}
	}

	/** The failure of a claim of {@code bytes} larger than the reach, refused as an acquire would be; null otherwise. */
	GpuOutOfMemoryException refuseBeyondReach(long bytes) {
		return this.chain.refuseBeyondReach(bytes);
	}

	/** Whether acquires wait in line for memory: a newcomer that misses the free lists goes behind them. */
	boolean anyWaiting() {
		return this.chain.anyWaiting();
	}

	/** Wakes the first acquire in line, if any: memory came back. */
	void memoryReturned() {
		this.chain.memoryReturned();
	}

	/**
	 * A new block of {@code size} bytes for a class (or {@link Block#ABOVE_TOP_CLASS}), a miss, waiting at most
	 * {@code waitNanos} for memory; {@code home} is the requesting thread's stripe.
	 * @throws GpuOutOfMemoryException if no memory could be had
	 */
	Block reserve(int classIndex, long size, long waitNanos, int home) {
		this.counters.countMiss(classIndex);
		MemoryObserver observer = this.observer;
		MemoryObserver.Span span = (observer != MemoryObserver.NONE)
				? observer.start(new MemoryOperation(MemoryOperation.Type.ACQUIRE, this.pool.name(), this.pool.kind(),
						size))
				: MemoryObserver.Span.NONE;
		Object event = this.recorder.missBegins();
		long start = System.nanoTime();
		Throwable failure = null;
		try {
			Block block = this.chain.obtain(new Miss(classIndex, size, home), waitNanos);
			this.counters.countUse(classIndex, true);
			grew();
			return block;
		}
		catch (RuntimeException | Error ex) {
			failure = ex;
			throw ex;
		}
		finally {
			this.counters.countMissNanos(System.nanoTime() - start);
			span.end(failure);
			this.recorder.missEnded(event, this.pool.kind().name(), size, failure != null);
		}
	}

	/**
	 * {@inheritDoc} Unified memory may exceed the device (the driver pages it), so a unified pool's requests are held
	 * to the budget only.
	 */
	@Override
	public GpuOutOfMemoryException beyondReach(long bytes) {
		if (bytes <= reach()) {
			return null;
		}
		long limit = this.allocator.limitBytes();
		String reason = (limit >= 0 && bytes > limit)
				? "larger than the budget, refused at once; the budget is " + this.allocator.limitOrigin()
				: "larger than the device's capacity, refused at once";
		return new GpuOutOfMemoryException(
				OutOfMemoryDiagnostic.of(this.allocator.kind(), bytes, this.allocator.memoryInfo(), limit, reason));
	}

	/** The most bytes a request could ever be given: its device's capacity or its budget, the smaller. */
	long reach() {
		long reach = this.reach;
		if (reach < 0) {
			long limit = this.allocator.limitBytes();
			long capacity = (this.allocator.kind() == MemoryKind.UNIFIED) ? Long.MAX_VALUE
					: this.allocator.memoryInfo().totalBytes();
			reach = (limit >= 0) ? Math.min(limit, capacity) : capacity;
			this.reach = reach;
		}
		return reach;
	}

	/**
	 * Takes back the blocks that came back late, then frees the listeners' way, or where they freed nothing (none
	 * may free anything: an observer) by trimming the tiers, first by what the request needs, then of everything.
	 * Counts the bytes a trim moved into the arena's free spans, where the retry can cut them.
	 */
	@Override
	public long free(long bytes, int attempt) {
		if (this.pool.isClosed()) {
			return 0;
		}
		this.upkeep.giveBackLate();
		long freed = 0;
		for (PoolListener listener : this.listeners) {
			freed += listener.outOfMemory(this.pool, bytes, attempt);
		}
		long cached = this.tiers.cachedBytes();
		if (freed > 0 || cached == 0) {
			return freed;
		}
		long aboveArena = this.tiers.cachedAboveArena();
		long keep = (attempt == 0) ? Math.max(0, cached - bytes) : 0;
		long released = this.tiers.trim(keep, 0);
		this.recorder.trimmed(keep, released, false);
		return released + Math.max(0, aboveArena - this.tiers.cachedAboveArena());
	}

	@Override
	public long pendingBytes() {
		return this.upkeep.pendingBytes();
	}

	@Override
	public boolean awaitStreamWork() {
		return this.upkeep.awaitPending();
	}

	@Override
	public boolean reclaimsLeaks() {
		return !this.pool.isClosed() && this.upkeep.reclaimsLeaks();
	}

	/** Bytes of the pool's blocks in use: lent, and not closed after stream work still to run. */
	@Override
	public long lentBytes() {
		return this.tiers.reservedBytes() - this.tiers.cachedBytes() - this.upkeep.pendingBytes();
	}

	@Override
	public void awaitLeaks(long timeoutMillis) throws InterruptedException {
		this.upkeep.awaitLeaks(timeoutMillis);
	}

	@Override
	public long leaks() {
		return this.counters.leaks();
	}

	@Override
	public GpuOutOfMemoryException refuse(Refusal refusal) {
		this.counters.countAllocationFailure();
		PoolStatistics.Segments segments = this.tiers.segments();
		OutOfMemoryDiagnostic refused = (refusal.last() != null) ? refusal.last().diagnostic()
				: OutOfMemoryDiagnostic.of(this.allocator.kind(), refusal.bytes(), this.allocator.memoryInfo(),
						this.allocator.limitBytes(), "");
		if (refusal.gaveWay()) {
			refused = refused.withReason("every thread holding memory of pool '" + this.pool.name()
					+ "' waits for more: this one, holding most, gives way; close what the request holds and retry it");
		}
		else if (refusal.behind() > 0) {
			refused = refused.withReason(refusal.behind() + " acquires of pool '" + this.pool.name() + "' wait for "
					+ "memory ahead of this one, which may not wait: what comes back goes to them first");
		}
		OutOfMemoryDiagnostic diagnostic = refused
			.withPool(lentBytes(), this.upkeep.pendingBytes(), this.tiers.cachedBytes(), this.largestClass)
			.withHolders(segments.largestFreeBlock(), segments.addressBytes(), this.recorder.holders(TOP_HOLDERS));
		if (refusal.waitedNanos() >= 0) {
			diagnostic = diagnostic.withWait(TimeUnit.NANOSECONDS.toMillis(refusal.waitedNanos()));
		}
		GpuOutOfMemoryException failure = refusal.gaveWay()
				? new GpuRetryOutOfMemoryException(diagnostic, refusal.heldWhenToldToGiveWay())
				: new GpuOutOfMemoryException(diagnostic, refusal.last());
		this.recorder.outOfMemory(refusal.bytes(), failure.getMessage());
		OutOfMemoryDiagnostic report = diagnostic;
		tellEach((listener) -> listener.allocationFailed(this.pool, report));
		return failure;
	}

	/**
	 * A request of {@code size} bytes of a class (or {@link Block#ABOVE_TOP_CLASS}) from stripe {@code home} that
	 * missed the tiers.
	 */
	private final class Miss implements OutOfMemoryChain.Request<Block> {

		private final int classIndex;

		private final long size;

		private final int home;

		Miss(int classIndex, long size, int home) {
			this.classIndex = classIndex;
			this.size = size;
			this.home = home;
		}

		@Override
		public long bytes() {
			return this.size;
		}

		@Override
		public Block allocate() {
			return Reservation.this.tiers.allocate(this.classIndex, this.size);
		}

		/** @throws IllegalStateException once the pool is closed */
		@Override
		public Block returned() {
			if (Reservation.this.pool.isClosed()) {
				throw new IllegalStateException("pool '" + Reservation.this.pool.name() + "' is closed");
			}
			Reservation.this.upkeep.giveBackLate();
			return Reservation.this.tiers.cached(this.classIndex, this.size, this.home, true);
		}

	}

}
