package io.gpumem.pool.recovery;

import io.gpumem.memory.GpuOutOfMemoryException;

/**
 * The order in which a pool tries to get memory its tiers do not hold, stated in one method ({@link #obtain}): the
 * first step that yields a block ends the chain, and a request no memory given back could serve goes through none
 * (PyTorch's {@code malloc}, RMM's {@code failure_callback_resource_adaptor}). What the steps ask of the pool is its
 * {@link MemorySource}; the refusal so far travels in one {@link Refusal}.
 *
 * @param <B> the pool's blocks
 */
public final class OutOfMemoryChain<B> {

	private final MemorySource source;

	private final RecoveryCounters counters;

	private final int retries;

	private final MemoryWaiters waiters;

	private final LeakCollection collection;

	/**
	 * A chain for pool {@code pool}, freeing memory for at most {@code retries} tries after the first, whose waits
	 * tell one of the threads of {@code holdings} to give way where all of them wait ({@code null}: none is told).
	 */
	public OutOfMemoryChain(String pool, MemorySource source, RecoveryCounters counters, int retries,
			Holdings holdings) {
		this.source = source;
		this.counters = counters;
		this.retries = retries;
		this.waiters = new MemoryWaiters(counters, holdings, new Deadlocks(pool, counters));
		this.collection = new LeakCollection(pool, source, counters);
	}

	/**
	 * A block for {@code request}, waiting at most {@code waitNanos} for memory to come back.
	 * @throws GpuOutOfMemoryException as the source {@linkplain MemorySource#refuse refuses} when no step yields one
	 */
	public B obtain(Request<B> request, long waitNanos) {
		Refusal refusal = new Refusal(request.bytes(), this.source.beyondReach(request.bytes()));
		boolean ahead = !this.waiters.any();
		B block = null;
		if (ahead) {
			block = allocate(request, refusal);
		}
		if (block == null && ahead) {
			block = freeAndRetry(request, refusal);
		}
		if (block == null && waitNanos == 0 && ahead) {
			block = afterStreamWork(request, refusal);
		}
		if (block == null && waitNanos > 0) {
			block = waitInLine(request, refusal, waitNanos);
		}
		if (block != null) {
			this.collection.served();
			return block;
		}
		if (!ahead && waitNanos == 0) {
			refusal.behind(Math.max(1, this.waiters.count()));
		}
		if (refusal.gaveWay() || refusal.behind() > 0) {
			throw this.source.refuse(refusal);
		}
		block = afterCollection(request, refusal);
		if (block == null) {
			throw this.source.refuse(refusal);
		}
		return block;
	}

	/**
	 * The failure of a request of {@code bytes} that no memory given back could serve (larger than the device or the
	 * budget), as the source {@linkplain MemorySource#refuse refuses} it, counted and told; null for one within reach.
	 */
	public GpuOutOfMemoryException refuseBeyondReach(long bytes) {
		Refusal refusal = new Refusal(bytes, this.source.beyondReach(bytes));
		return refusal.hopeless() ? this.source.refuse(refusal) : null;
	}

	/** Whether requests wait in line: memory that comes back goes to them before any newcomer. */
	public boolean anyWaiting() {
		return this.waiters.any();
	}

	/** Wakes the first request in line, if any: memory came back. */
	public void memoryReturned() {
		if (this.waiters.any()) {
			this.waiters.memoryReturned();
		}
	}

	/** Step 1: the allocator as it is; null, with its refusal kept, where it refuses. */
	private B allocate(Request<B> request, Refusal refusal) {
		if (refusal.hopeless()) {
			return null;
		}
		try {
			return request.allocate();
		}
		catch (GpuOutOfMemoryException ex) {
			refusal.refusedBy(ex);
			return null;
		}
		catch (RuntimeException ex) {
			this.counters.countAllocationFailure(ex);
			throw ex;
		}
	}

	/** Step 2: the allocator again each time memory was freed for the request, while the retries last. */
	private B freeAndRetry(Request<B> request, Refusal refusal) {
		B block = null;
		for (int attempt = 0; block == null && attempt < this.retries && !refusal.hopeless()
				&& this.source.free(request.bytes(), attempt) > 0; attempt++) {
			block = allocate(request, refusal);
		}
		return block;
	}

	/** Steps 1 and 2 together, as each later step tries once it has brought memory back. */
	private B retried(Request<B> request, Refusal refusal) {
		B block = allocate(request, refusal);
		return (block != null) ? block : freeAndRetry(request, refusal);
	}

	/**
	 * Step 3, for a request that may not wait: waits for the work of the buffers closed after a stream so far, as
	 * long as it takes (as PyTorch synchronizes their events before it gives up), and tries again if any came back.
	 */
	private B afterStreamWork(Request<B> request, Refusal refusal) {
		if (refusal.hopeless() || this.source.pendingBytes() == 0) {
			return null;
		}
		this.counters.countStreamWait();
		return this.source.awaitStreamWork() ? retried(request, refusal) : null;
	}

	/**
	 * Step 4, for a request that may wait: in line ({@link MemoryWaiters}), takes what came back or tries again,
	 * freeing memory where the line allows; a request that never reached the allocator tries once when its wait ends.
	 */
	private B waitInLine(Request<B> request, Refusal refusal, long waitNanos) {
		if (refusal.hopeless()) {
			return null;
		}
		long start = System.nanoTime();
		B block = this.waiters.await(waitNanos, refusal, (freeing) -> {
			B returned = request.returned();
			return (returned != null) ? returned
					: freeing ? retried(request, refusal) : allocate(request, refusal);
		});
		refusal.waited(System.nanoTime() - start);
		return (block != null || refusal.tried() || refusal.gaveWay()) ? block : retried(request, refusal);
	}

	/**
	 * Step 5, the last resort, where buffers dropped without close come back and some are lent: a garbage
	 * collection ({@link LeakCollection}), trying again each time it brought some back.
	 */
	private B afterCollection(Request<B> request, Refusal refusal) {
		if (refusal.hopeless() || !this.source.reclaimsLeaks()) {
			return null;
		}
		long lent = this.source.lentBytes();
		if (lent <= 0) {
			return null;
		}
		return this.collection.collect(lent, () -> retried(request, refusal));
	}

	/**
	 * One request for memory the tiers did not hold.
	 *
	 * @param <B> the pool's blocks
	 */
	public interface Request<B> {

		/** The bytes asked for. */
		long bytes();

		/**
		 * A block from the allocator.
		 * @throws GpuOutOfMemoryException if the allocator refuses
		 */
		B allocate();

		/** A block that came back to the pool since the request missed its tiers, or null. */
		B returned();

	}

}
