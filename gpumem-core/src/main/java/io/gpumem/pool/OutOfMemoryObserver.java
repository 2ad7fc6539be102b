package io.gpumem.pool;

import io.gpumem.memory.OutOfMemoryDiagnostic;

/**
 * Told of every acquire a pool gives up on for want of memory, with the report its exception's message gives,
 * before the exception is thrown: as PyTorch's out-of-memory observers and RMM's failure callback are. Added to
 * a pool as any {@link PoolListener}; in the starter, every bean of this type observes every pool.
 */
@FunctionalInterface
public interface OutOfMemoryObserver extends PoolListener {

	/** Called with the report of an acquire {@code pool} is about to fail. */
	void observe(MemoryPool pool, OutOfMemoryDiagnostic report);

	@Override
	default void allocationFailed(MemoryPool pool, OutOfMemoryDiagnostic report) {
		observe(pool, report);
	}

}
