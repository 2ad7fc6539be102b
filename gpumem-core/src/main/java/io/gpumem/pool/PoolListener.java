package io.gpumem.pool;

import io.gpumem.memory.OutOfMemoryDiagnostic;

/**
 * Told by a {@link MemoryPool} of what concerns memory pressure: a miss that reserved more
 * memory, an allocation the allocator refused, a sleep and a wake. The pressure handler is one.
 */
public interface PoolListener {

	/**
	 * Called after a miss made {@code pool} reserve more memory from its allocator; what it throws is logged, and
	 * the acquire gets its buffer all the same.
	 */
	default void reservedMemoryGrew(MemoryPool pool) {
	}

	/**
	 * Called when the allocator refused {@code requestedBytes} for {@code pool}, before retry
	 * {@code attempt} (from 0): free what memory can be freed.
	 * @return the bytes freed; 0 when nothing could be, and retrying is pointless
	 */
	default long outOfMemory(MemoryPool pool, long requestedBytes, int attempt) {
		return 0;
	}

	/**
	 * Called when {@code pool} gives up on a request and is about to throw its out-of-memory exception, with
	 * what the exception's message says: the request, the device, the pool, its largest holders.
	 */
	default void allocationFailed(MemoryPool pool, OutOfMemoryDiagnostic report) {
	}

	/** Called after {@code pool} fell asleep ({@link MemoryPool#sleep}), with what the sleep did. */
	default void slept(MemoryPool pool, SleepStatus.Sleep sleep) {
	}

	/** Called after {@code pool} woke ({@link MemoryPool#wake}), with what the wake did. */
	default void woke(MemoryPool pool, SleepStatus.Wake wake) {
	}

}
