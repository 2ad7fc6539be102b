package io.gpumem.allocator;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

import io.gpumem.config.InvalidSettingException;
import io.gpumem.memory.ByteSizes;

/**
 * A budget of bytes that several {@link LimitingAllocator}s draw on together: one per device, so that
 * the device pool and the unified pool (and whatever else allocates on that device through gpumem)
 * together hold at most the budget, as PyTorch's per-process memory fraction bounds a device.
 */
public final class MemoryBudget {

	private final long limitBytes;

	private final String origin;

	private final AtomicLong usedBytes = new AtomicLong();

	public MemoryBudget(long limitBytes) {
		this(limitBytes, "a budget of " + ByteSizes.format(limitBytes));
	}

	/**
	 * @param limitBytes the budget
	 * @param origin how it was reckoned, for out-of-memory messages, as in
	 * {@code memory-fraction 0.8 of the limit of 300.00 MiB from CUDA_DEVICE_MEMORY_LIMIT_0 (HAMi)}
	 */
	public MemoryBudget(long limitBytes, String origin) {
		if (limitBytes <= 0) {
			throw new IllegalArgumentException("memory limit must be positive: " + limitBytes);
		}
		this.limitBytes = limitBytes;
		this.origin = Objects.requireNonNull(origin, "origin");
	}

	/**
	 * A budget of {@code fraction} of {@code totalBytes}.
	 * @param fraction in (0, 1]
	 */
	public static MemoryBudget ofFraction(long totalBytes, double fraction) {
		return ofFraction(totalBytes, fraction, ByteSizes.format(totalBytes));
	}

	/**
	 * A budget of {@code fraction} of {@code totalBytes}, {@code whole} naming them in its origin, as in
	 * {@code the limit of 300.00 MiB from CUDA_DEVICE_MEMORY_LIMIT_0 (HAMi)}.
	 * @param fraction in (0, 1]
	 */
	public static MemoryBudget ofFraction(long totalBytes, double fraction, String whole) {
		if (!(fraction > 0.0 && fraction <= 1.0)) {
			throw new InvalidSettingException("memory-fraction", fraction, "must lie in (0, 1]");
		}
		return new MemoryBudget(Math.max(1, (long) Math.floor(totalBytes * fraction)),
				"memory-fraction " + fraction + " of " + whole);
	}

	/**
	 * This budget less {@code bytes} the device already holds for {@code what}; this budget where they are not below
	 * it, since no budget would be left.
	 */
	public MemoryBudget less(long bytes, String what) {
		if (bytes <= 0 || bytes >= this.limitBytes) {
			return this;
		}
		return new MemoryBudget(this.limitBytes - bytes, this.origin + ", less the " + ByteSizes.format(bytes) + " "
				+ what);
	}

	/** The budget in bytes. */
	public long limitBytes() {
		return this.limitBytes;
	}

	/** How the budget was reckoned, as in {@code memory-fraction 0.9 of 4.00 GiB}. */
	public String origin() {
		return this.origin;
	}

	/** Bytes drawn and not yet given back. */
	public long usedBytes() {
		return this.usedBytes.get();
	}

	/** Draws {@code bytes} if they fit; answers whether they did. */
	boolean tryDraw(long bytes) {
		long used;
		do {
			used = this.usedBytes.get();
			if (bytes > this.limitBytes - used) {
				return false;
			}
		}
		while (!this.usedBytes.compareAndSet(used, used + bytes));
		return true;
	}

	void giveBack(long bytes) {
		this.usedBytes.addAndGet(-bytes);
	}

	@Override
	public String toString() {
		return ByteSizes.format(usedBytes()) + " of " + ByteSizes.format(this.limitBytes);
	}

}
