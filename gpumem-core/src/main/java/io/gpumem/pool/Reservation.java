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
 * frees (the pressure handler's out-of-memory chain), or without listeners by the pool trimming itself;
 * then, with a wait allowed, in line for memory to come back ({@link MemoryWaiters}); and at last a
 * {@link GpuOutOfMemoryException} with the allocator's figures and the pool's. A request larger than the
 * device or the budget fails at once; with others in line, a request that may wait does not try ahead of
 * them.
 */
final class Reservation {

	private final StratifiedMemoryPool pool;

	private final Tiers tiers;

	private final Upkeep upkeep;

	private final PoolCounters counters;

	private final int retries;

	private final long largestClass;

	private final MemoryWaiters waiters;

	private final List<PoolListener> listeners = new CopyOnWriteArrayList<>();

	private volatile MemoryObserver observer = MemoryObserver.NONE;

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
			return block;
		}
		this.counters.countAllocationFailure();
		this.listeners.forEach((listener) -> listener.allocationFailed(this.pool, size));
		long cached = this.pool.cachedBytes();
		OutOfMemoryDiagnostic diagnostic = refusal[0].diagnostic()
			.withPool(this.pool.reservedBytes() - cached, cached, this.largestClass);
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
				if (attempt >= this.retries || makeRoom(size, attempt) == 0) {
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
