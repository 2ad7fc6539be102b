package io.gpumem.pool;

import io.gpumem.memory.GpuOutOfMemoryException;

/**
 * Reserves a block, and when the allocator refuses, has memory freed and tries again, at most
 * {@code retries} times, as RMM's {@code failure_callback_resource_adaptor} does. Other failures pass
 * through at once, counted in the ledger; the caller counts a refusal, which it may still wait out.
 */
final class OutOfMemoryRetry {

	/** Frees memory for a refused request of {@code bytes}, before retry {@code attempt} (from 0). */
	@FunctionalInterface
	interface MakeRoom {

		/** @return the bytes freed; 0 when nothing could be, and retrying is pointless */
		long free(long bytes, int attempt);

	}

	private final int retries;

	OutOfMemoryRetry(int retries) {
		this.retries = retries;
	}

	/**
	 * Reserves a block of {@code size} bytes for a class (-1 above the top class).
	 * @throws GpuOutOfMemoryException the allocator's last refusal, once retrying is over or pointless
	 */
	Block reserve(Ledger ledger, int classIndex, long size, MakeRoom makeRoom) {
		for (int attempt = 0;; attempt++) {
			try {
				return ledger.reserve(classIndex, size);
			}
			catch (GpuOutOfMemoryException ex) {
				if (attempt >= this.retries || makeRoom.free(size, attempt) == 0) {
					throw ex;
				}
			}
			catch (RuntimeException ex) {
				ledger.countAllocationFailure();
				throw ex;
			}
		}
	}

}
