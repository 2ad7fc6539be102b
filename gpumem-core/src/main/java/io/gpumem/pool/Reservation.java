package io.gpumem.pool;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.OutOfMemoryDiagnostic;
import io.gpumem.observation.MemoryObserver;
import io.gpumem.observation.MemoryOperation;

/**
 * The one way a pool gets memory its tiers do not hold, observed as one span: from the allocator; when the
 * allocator refuses, again after having memory freed, at most {@code oomRetries} times, as RMM's
 * {@code failure_callback_resource_adaptor} does: by the pool's listeners, which decide what each attempt
 * frees (the pressure handler's out-of-memory chain), or where they free nothing by the pool trimming itself;
 * then, without a wait allowed, after the work of buffers closed after a stream, and with one, in line for
 * memory to come back ({@link MemoryWaiters}); then, as the last resort, after a garbage collection has found
 * buffers dropped without close; and at last a {@link GpuOutOfMemoryException} with the allocator's figures and
 * the pool's. A request larger than the device or the budget fails at once; with others in line, a request that
 * may wait does not try ahead of them.
 */
final class Reservation {

	private static final System.Logger LOGGER = System.getLogger(StratifiedMemoryPool.class.getName());


	/** How many of the largest holders an out-of-memory failure names. */
	private static final int TOP_HOLDERS = 5;


	private final StratifiedMemoryPool pool;

	private final Tiers tiers;

	private final Upkeep upkeep;

	private final PoolCounters counters;

	private final int retries;

	private final long largestClass;

	private final MemoryWaiters waiters;

	private final AcquireSites sites;

	private final LeakCollection collection;

	private final List<PoolListener> listeners = new CopyOnWriteArrayList<>();

	private volatile MemoryObserver observer = MemoryObserver.NONE;


	Reservation(StratifiedMemoryPool pool, PoolConfig config, Tiers tiers, Upkeep upkeep, PoolCounters counters,
			AcquireSites sites) {
		this.pool = pool;
		this.sites = sites;
		this.collection = new LeakCollection(pool.name(), upkeep, counters);
		this.tiers = tiers;
		this.upkeep = upkeep;
		this.counters = counters;
		this.retries = config.oomRetries();
		this.largestClass = config.sizeClasses().largest();
		this.waiters = new MemoryWaiters(counters);
	}

	void addListener(PoolListener listener) {
		this.listeners.add(Objects.requireNonNull(listener, "listener"));
	}

	void observeWith(MemoryObserver observer) {
		this.observer = Objects.requireNonNull(observer, "observer");
	}

	/** Tells the listeners that the pool reserved more memory. */
	void grew() {
		this.listeners.forEach((listener) -> listener.reservedMemoryGrew(this.pool));
	}

	/** Wakes the first acquire in line, if any: memory came back. */
	void memoryReturned() {
		if (this.waiters.any()) {
			this.waiters.memoryReturned();
		}
	}

	/**
	 * A new block of {@code size} bytes for a class (-1 above the top class), a miss, waiting at most
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
		PoolEvents.Miss event = PoolEvents.missBegins();
		long start = System.nanoTime();
		Throwable failure = null;
		try {
			Block block = reserveOrWait(classIndex, size, waitNanos, home);
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
			PoolEvents.missEnds(event, this.pool, size, failure != null);
		}
	}

	private Block reserveOrWait(int classIndex, long size, long waitNanos, int home) {
		GpuOutOfMemoryException[] refusal = { null };
		Block block = (waitNanos == 0 || !this.waiters.any()) ? retried(classIndex, size, home, refusal, true) : null;
		if (block == null && waitNanos == 0 && !hopeless(refusal[0]) && this.upkeep.pendingBytes() > 0) {
			block = afterStreamWork(classIndex, size, home, refusal);
		}
		boolean waits = block == null && waitNanos > 0 && (refusal[0] == null || !hopeless(refusal[0]));
		long start = System.nanoTime();
		if (waits) {
			block = this.waiters.await(waitNanos, (freeing) -> {
				this.pool.checkOpen();
				boolean back = this.upkeep.takeBack();
				Block returned = this.tiers.cached(classIndex, size, home, true);
				return (returned != null) ? returned
						: retried(classIndex, size, home, refusal, freeing || back);
			});
		}
		if (block == null && refusal[0] == null) {
			block = retried(classIndex, size, home, refusal, true);
		}
		if (block == null && !hopeless(refusal[0])) {
			block = collected(classIndex, size, home, refusal);
		}
		else if (block != null) {
			this.collection.served();
		}
		if (block != null) {
			return block;
		}
		this.counters.countAllocationFailure();
		PoolStatistics.Segments segments = this.pool.statistics().segments();
		OutOfMemoryDiagnostic diagnostic = refusal[0].diagnostic()
			.withPool(lentBytes(), this.upkeep.pendingBytes(), this.pool.cachedBytes(), this.largestClass)
			.withHolders(segments.largestFreeBlock(), segments.addressBytes(), this.sites.top(TOP_HOLDERS));
		if (waits) {
			diagnostic = diagnostic.withWait(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
		}
		GpuOutOfMemoryException failure = new GpuOutOfMemoryException(diagnostic, refusal[0]);
		this.sites.history().outOfMemory(size, failure.getMessage());
		for (PoolListener listener : this.listeners) {
			tell(listener, diagnostic);
		}
		throw failure;
	}

	/** Tells {@code listener} of a failure; one that fails itself is logged, and hides nothing. */
	private void tell(PoolListener listener, OutOfMemoryDiagnostic report) {
		try {
			listener.allocationFailed(this.pool, report);
		}
		catch (RuntimeException ex) {
			LOGGER.log(System.Logger.Level.WARNING, "A listener of pool '" + this.pool.name() + "' failed", ex);
		}
	}

	/** Whether no memory given back could serve the refused request: it is larger than the device or the budget. */
	private static boolean hopeless(GpuOutOfMemoryException refusal) {
		return refusal.diagnostic().exceedsCapacity();
	}

	/** Bytes of the pool's blocks in use: lent, and not closed after stream work still to run. */
	private long lentBytes() {
		return this.pool.reservedBytes() - this.pool.cachedBytes() - this.upkeep.pendingBytes();
	}

	/**
	 * A block from the allocator, tried again after freeing memory while the retries last and something was
	 * freed, where {@code freeing} allows it; null, with the allocator's last refusal kept, when refused.
	 */
	private Block retried(int classIndex, long size, int home, GpuOutOfMemoryException[] refusal, boolean freeing) {
		for (int attempt = 0;; attempt++) {
			try {
				return this.tiers.allocate(classIndex, size, home);
			}
			catch (GpuOutOfMemoryException ex) {
				if (!freeing || attempt >= this.retries || hopeless(ex) || makeRoom(size, attempt) == 0) {
					refusal[0] = ex;
					return null;
				}
			}
			catch (RuntimeException ex) {
				this.counters.countAllocationFailure();
				throw ex;
			}
		}
	}

	/**
	 * For an acquire that may not wait: waits for the work of the buffers closed after a stream so far, as long
	 * as it takes (as PyTorch synchronizes their events before it gives up), and retries if any came back. An
	 * acquire that may wait takes them back as their work completes, in line ({@link MemoryWaiters}).
	 */
	private Block afterStreamWork(int classIndex, long size, int home, GpuOutOfMemoryException[] refusal) {
		this.counters.countStreamWait();
		return this.upkeep.awaitPending() ? retried(classIndex, size, home, refusal, true) : null;
	}

	/**
	 * The last resort before a failure, where leak detection brings buffers dropped without close back and
	 * something is lent: a garbage collection ({@link LeakCollection}), retrying each time it brought some back.
	 */
	private Block collected(int classIndex, long size, int home, GpuOutOfMemoryException[] refusal) {
		long lent = lentBytes();
		return (this.pool.isClosed() || !this.upkeep.reclaimsLeaks() || lent <= 0) ? null
				: this.collection.collect(lent, () -> retried(classIndex, size, home, refusal, true));
	}

	/**
	 * Frees memory for a refused request of {@code size} bytes before retry {@code attempt} (from 0): takes back
	 * the blocks that came back late, then the listeners' way, or where they freed nothing (none may free
	 * anything: an observer) by trimming the pool, first by what the request needs, then of everything.
	 * @return the bytes freed, counting those a trim moved into the arena's free spans, where the retry can cut
	 * them; 0 when nothing could be freed, and retrying is pointless
	 */
	private long makeRoom(long size, int attempt) {
		if (this.pool.isClosed()) {
			return 0;
		}
		this.upkeep.takeBack();
		long freed = 0;
		for (PoolListener listener : this.listeners) {
			freed += listener.outOfMemory(this.pool, size, attempt);
		}
		long cached = this.pool.cachedBytes();
		if (freed > 0 || cached == 0) {
			return freed;
		}
		long aboveArena = this.tiers.cachedAboveArena();
		long released = this.pool.trim((attempt == 0) ? Math.max(0, cached - size) : 0);
		return released + Math.max(0, aboveArena - this.tiers.cachedAboveArena());
	}

}
