package io.gpumem.allocator;

import java.util.concurrent.atomic.AtomicLong;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.OutOfMemoryDiagnostic;

/**
 * Refuses allocations that would take the bytes outstanding through it beyond a budget, as PyTorch's
 * per-process memory fraction does.
 */
public final class LimitingAllocator extends AllocatorDecorator {

	private final long limitBytes;

	private final AtomicLong allocatedBytes = new AtomicLong();

	public LimitingAllocator(MemoryAllocator upstream, long limitBytes) {
		super(upstream);
		if (limitBytes <= 0) {
			throw new IllegalArgumentException("memory limit must be positive: " + limitBytes);
		}
		this.limitBytes = limitBytes;
	}

	/**
	 * A limit of {@code fraction} of the upstream device's total memory.
	 * @param fraction in (0, 1]
	 */
	public static LimitingAllocator ofFraction(MemoryAllocator upstream, double fraction) {
		if (!(fraction > 0.0 && fraction <= 1.0)) {
			throw new IllegalArgumentException("memory fraction must lie in (0, 1]: " + fraction);
		}
		long total = upstream.memoryInfo().totalBytes();
		return new LimitingAllocator(upstream, Math.max(1, (long) Math.floor(total * fraction)));
	}

	/** The budget in bytes. */
	public long limitBytes() {
		return this.limitBytes;
	}

	/** Bytes outstanding through this allocator. */
	public long allocatedBytes() {
		return this.allocatedBytes.get();
	}

	@Override
	public Allocation allocate(long bytes) {
		MemoryAllocator.requirePositiveSize(bytes);
		long allocated;
		do {
			allocated = this.allocatedBytes.get();
			if (bytes > this.limitBytes - allocated) {
				throw new GpuOutOfMemoryException(OutOfMemoryDiagnostic.of(kind(), bytes, memoryInfo(),
						this.limitBytes, "limit reached: " + ByteSizes.format(allocated) + " of "
								+ ByteSizes.format(this.limitBytes) + " allocated"));
			}
		}
		while (!this.allocatedBytes.compareAndSet(allocated, allocated + bytes));
		try {
			return super.allocate(bytes);
		}
		catch (RuntimeException ex) {
			this.allocatedBytes.addAndGet(-bytes);
			throw ex;
		}
	}

	@Override
	public void free(Allocation allocation) {
		super.free(allocation);
		this.allocatedBytes.addAndGet(-allocation.size());
	}

	@Override
	public String describe() {
		return super.describe() + ", limit " + ByteSizes.format(this.limitBytes);
	}

}
