package io.gpumem.allocator;

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

	private final AtomicLong usedBytes = new AtomicLong();

	public MemoryBudget(long limitBytes) {
		if (limitBytes <= 0) {
			throw new IllegalArgumentException("memory limit must be positive: " + limitBytes);
		}
		this.limitBytes = limitBytes;
	}

	/**
	 * A budget of {@code fraction} of {@code totalBytes}.
	 * @param fraction in (0, 1]
	 */
	public static MemoryBudget ofFraction(long totalBytes, double fraction) {
		if (!(fraction > 0.0 && fraction <= 1.0)) {
			throw new InvalidSettingException("memory-fraction", fraction, "must lie in (0, 1]");
		}
		return new MemoryBudget(Math.max(1, (long) Math.floor(totalBytes * fraction)));
	}

	/** The budget in bytes. */
	public long limitBytes() {
		return this.limitBytes;
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
