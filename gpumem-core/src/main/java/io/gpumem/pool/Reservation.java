package io.gpumem.pool;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.OutOfMemoryDiagnostic;
import io.gpumem.observation.MemoryObserver;
import io.gpumem.observation.MemoryOperation;

/**
 * The one way a pool gets memory its tiers do not hold, observed as one span: from the allocator; when the
 * allocator refuses, again after having memory freed, at most {@code oomRetries} times, as RMM's
 * {@code failure_callback_resource_adaptor} does: by the pool's listeners, which decide what each attempt
 * frees (the pressure handler's out-of-memory chain), or without listeners by the pool trimming itself;
 * then, with a wait allowed, in line for memory to come back ({@link MemoryWaiters}); then, as last resorts,
 * after the work of buffers closed after a stream and after a garbage collection has found buffers dropped
 * without close; and at last a {@link GpuOutOfMemoryException} with the allocator's figures and the pool's. A
 * request larger than the device or the budget fails at once; with others in line, a request that may wait
 * does not try ahead of them.
 */
final class Reservation {

	private static final System.Logger LOGGER = System.getLogger(StratifiedMemoryPool.class.getName());

	/**
	 * How many times an acquire about to fail waits for the garbage collector to find buffers dropped without
	 * close, the wait doubling from 1 ms: at most half a second in all, as {@code java.nio.Bits} waits for
	 * direct memory.
	 */
	private static final int GC_WAITS = 9;

	private final StratifiedMemoryPool pool;

	private final Tiers tiers;

	private final Upkeep upkeep;

	private final PoolCounters counters;

	private final int retries;

	private final long largestClass;

	private final MemoryWaiters waiters;

	private final List<PoolListener> listeners = new CopyOnWriteArrayList<>();

	private volatile MemoryObserver observer = MemoryObserver.NONE;

	/** Whether acquires are asking the garbage collector for memory: logged when it begins. */
	private volatile boolean collecting;

	Reservation(StratifiedMemoryPool pool, PoolConfig config, Tiers tiers, Upkeep upkeep, PoolCounters counters) {
		this.pool = pool;
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
		long start = System.nanoTime();
		Throwable failure = null;
		try {
			Block block = reserveOrWait(classIndex, size, waitNanos, home);
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
		}
	}

	private Block reserveOrWait(int classIndex, long size, long waitNanos, int home) {
		GpuOutOfMemoryException[] refusal = { null };
		Block block = (waitNanos == 0 || !this.waiters.any()) ? retried(classIndex, size, refusal) : null;
		long start = System.nanoTime();
		boolean waits = block == null && waitNanos > 0
				&& (refusal[0] == null || !refusal[0].diagnostic().exceedsCapacity());
		if (waits) {
			block = this.waiters.await(waitNanos, () -> {
				this.pool.checkOpen();
				this.upkeep.takeBack();
				Block returned = this.tiers.cached(classIndex, size, home, true);
				return (returned != null) ? returned : retried(classIndex, size, refusal);
			});
		}
		if (block == null && refusal[0] == null) {
			block = retried(classIndex, size, refusal);
		}
		if (block != null) {
			if (this.collecting) {
				this.collecting = false;
			}
			return block;
		}
		if (!refusal[0].diagnostic().exceedsCapacity()) {
			long waitLeft = (waitNanos > 0) ? Math.max(1, waitNanos - (System.nanoTime() - start)) : 0;
			block = lastResort(classIndex, size, waitLeft, refusal);
			if (block != null) {
				return block;
			}
		}
		this.counters.countAllocationFailure();
		this.listeners.forEach((listener) -> listener.allocationFailed(this.pool, size));
		long cached = this.pool.cachedBytes();
		long pending = this.upkeep.pendingBytes();
		OutOfMemoryDiagnostic diagnostic = refusal[0].diagnostic()
			.withPool(this.pool.reservedBytes() - cached - pending, pending, cached, this.largestClass);
		if (waits) {
			diagnostic = diagnostic.withWait(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
		}
		throw new GpuOutOfMemoryException(diagnostic, refusal[0]);
	}

	/**
	 * A block from the allocator, tried again after freeing memory while the retries last and something was
	 * freed; null, with the allocator's last refusal kept, when refused.
	 */
	private Block retried(int classIndex, long size, GpuOutOfMemoryException[] refusal) {
		for (int attempt = 0;; attempt++) {
			try {
				return this.tiers.allocate(classIndex, size);
			}
			catch (GpuOutOfMemoryException ex) {
				if (attempt >= this.retries || ex.diagnostic().exceedsCapacity() || makeRoom(size, attempt) == 0) {
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
	 * What an acquire tries before it fails for good: it waits for the work of buffers closed after a stream,
	 * within what is left of the request's wait ({@code waitNanos}), or as long as that work takes when it may
	 * not wait (as PyTorch synchronizes their events); then it has the garbage collector find buffers dropped
	 * without close, where leak detection brings them back; and it retries after each that brought memory back.
	 */
	private Block lastResort(int classIndex, long size, long waitNanos, GpuOutOfMemoryException[] refusal) {
		if (this.pool.isClosed()) {
			return null;
		}
		if (this.upkeep.pendingBytes() > 0) {
			this.counters.countStreamWait();
			if (this.upkeep.awaitPending((waitNanos > 0) ? waitNanos : Long.MAX_VALUE)) {
				Block block = retried(classIndex, size, refusal);
				if (block != null) {
					return block;
				}
			}
		}
		long lent = this.pool.reservedBytes() - this.pool.cachedBytes() - this.upkeep.pendingBytes();
		return (this.upkeep.reclaimsLeaks() && lent > 0) ? collected(classIndex, size, lent, refusal) : null;
	}

	/**
	 * Requests a garbage collection and waits for it to find buffers dropped without close, retrying each time
	 * some came back, with a backoff of {@value #GC_WAITS} doubling waits, as {@code java.nio.Bits} does before
	 * it refuses direct memory.
	 */
	private Block collected(int classIndex, long size, long lent, GpuOutOfMemoryException[] refusal) {
		this.counters.countGcRequest();
		if (!this.collecting) {
			this.collecting = true;
			LOGGER.log(System.Logger.Level.WARNING, () -> "Pool '" + this.pool.name() + "' ran out of memory with "
					+ ByteSizes.format(lent) + " lent: asking the garbage collector for buffers dropped without "
					+ "close() (logged once until an acquire succeeds without it)");
		}
		System.gc();
		try {
			for (int wait = 0; wait < GC_WAITS; wait++) {
				if (this.upkeep.awaitLeaks(1L << wait)) {
					Block block = retried(classIndex, size, refusal);
					if (block != null) {
						return block;
					}
				}
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		return null;
	}

	/**
	 * Frees memory for a refused request of {@code size} bytes before retry {@code attempt} (from 0): takes back
	 * the blocks that came back late, then the listeners' way, or without listeners by trimming the pool, first
	 * by what the request needs, then of everything.
	 * @return the bytes freed, counting those a trim moved into the arena's free spans, where the retry can cut
	 * them; 0 when nothing could be freed, and retrying is pointless
	 */
	private long makeRoom(long size, int attempt) {
		if (this.pool.isClosed()) {
			return 0;
		}
		this.upkeep.takeBack();
		if (!this.listeners.isEmpty()) {
			long freed = 0;
			for (PoolListener listener : this.listeners) {
				freed += listener.outOfMemory(this.pool, size, attempt);
			}
			return freed;
		}
		long cached = this.pool.cachedBytes();
		if (cached == 0) {
			return 0;
		}
		long aboveArena = this.tiers.cachedAboveArena();
		long released = this.pool.trim((attempt == 0) ? Math.max(0, cached - size) : 0);
		return released + Math.max(0, aboveArena - this.tiers.cachedAboveArena());
	}

}
