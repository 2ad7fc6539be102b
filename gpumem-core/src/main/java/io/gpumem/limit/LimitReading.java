package io.gpumem.limit;

import java.util.Objects;

/**
 * What one source states of a device's memory.
 *
 * @param bytes the figure, in bytes
 * @param origin where it was read, as the user would look for it: an environment variable's name or a file
 * @param sharing the way of sharing that states it, as in {@code HAMi} or {@code MPS}
 * @param kind whether the figure is enforced, only advised, or an amount protected from reclaim
 */
public record LimitReading(long bytes, String origin, String sharing, Kind kind) {

	public LimitReading {
		if (bytes < 0) {
			throw new IllegalArgumentException("a limit cannot be negative: " + bytes + " from " + origin);
		}
		Objects.requireNonNull(origin, "origin");
		Objects.requireNonNull(sharing, "sharing");
		Objects.requireNonNull(kind, "kind");
	}

	/** The source in words for logs and the endpoint, as in {@code CUDA_DEVICE_MEMORY_LIMIT_0 (HAMi)}. */
	public String source() {
		return this.origin + " (" + this.sharing + ")";
	}

	/** What a figure means to the process. */
	public enum Kind {

		/** A limit something enforces: allocations beyond it fail. */
		ENFORCED,

		/** A limit nobody enforces, which the service keeps so that the device's other users get their share. */
		ADVISORY,

		/**
		 * An amount protected from reclaim (cgroup's {@code dmem.min}): not a limit, but the level above which the
		 * process's memory may be taken from it, where pressure starts shrinking.
		 */
		PROTECTED

	}

}
