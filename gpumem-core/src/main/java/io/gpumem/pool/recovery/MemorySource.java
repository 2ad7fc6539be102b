package io.gpumem.pool.recovery;

import io.gpumem.memory.GpuOutOfMemoryException;

/** What an {@link OutOfMemoryChain}'s steps ask of the pool whose memory ran short. */
public interface MemorySource {

	/**
	 * The refusal of a request of {@code bytes} no memory given back could serve: larger than the device's capacity
	 * or the budget; null where it could be served.
	 */
	GpuOutOfMemoryException beyondReach(long bytes);

	/**
	 * Frees memory for a refused request of {@code bytes} before retry {@code attempt} (from 0).
	 * @return the bytes freed; 0 when nothing could be, and retrying is pointless
	 */
	long free(long bytes, int attempt);

	/** Bytes of buffers closed after stream work that has not completed. */
	long pendingBytes();

	/**
	 * Waits for the work of the buffers closed after a stream so far, and takes them back.
	 * @return whether any came back
	 */
	boolean awaitStreamWork();

	/** Whether buffers dropped without close come back at all. */
	boolean reclaimsLeaks();

	/** Bytes lent to buffers not closed: what a garbage collection could bring back. */
	long lentBytes();

	/** Waits up to {@code timeoutMillis} for buffers dropped without close to be found, and takes them back. */
	void awaitLeaks(long timeoutMillis) throws InterruptedException;

	/** Buffers taken back after they were dropped without close, so far. */
	long leaks();

	/** The failure to throw when every step was refused, the pool's figures added to the refusal. */
	GpuOutOfMemoryException refuse(Refusal refusal);

}
