package io.gpumem.allocator;

import java.util.Objects;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.OutOfMemoryDiagnostic;

/**
 * Refuses allocations that would take the bytes drawn on its {@link MemoryBudget} beyond the budget, as
 * PyTorch's per-process memory fraction does. Allocators of one device share one budget.
 */
public final class LimitingAllocator extends AllocatorDecorator {

	private final MemoryBudget budget;

	/** A limiting allocator with a budget of its own. */
	public LimitingAllocator(MemoryAllocator upstream, long limitBytes) {
		this(upstream, new MemoryBudget(limitBytes));
	}

	/** A limiting allocator drawing on {@code budget}, which other allocators may share. */
	public LimitingAllocator(MemoryAllocator upstream, MemoryBudget budget) {
		super(upstream);
		this.budget = Objects.requireNonNull(budget, "budget");
	}

	/**
	 * A limit of {@code fraction} of the upstream device's total memory, of its own.
	 * @param fraction in (0, 1]
	 */
	public static LimitingAllocator ofFraction(MemoryAllocator upstream, double fraction) {
		return new LimitingAllocator(upstream, MemoryBudget.ofFraction(upstream.memoryInfo().totalBytes(), fraction));
	}

	/** The budget in bytes, or an upstream allocator's where that is smaller. */
	@Override
	public long limitBytes() {
		long upstream = super.limitBytes();
		return (upstream >= 0) ? Math.min(upstream, this.budget.limitBytes()) : this.budget.limitBytes();
	}

	/** The budget's origin, or an upstream allocator's where its limit is the smaller. */
	@Override
	public String limitOrigin() {
		long upstream = super.limitBytes();
		return (upstream >= 0 && upstream < this.budget.limitBytes()) ? super.limitOrigin() : this.budget.origin();
	}

	/** Bytes drawn on the budget, through this allocator and those sharing it. */
	public long allocatedBytes() {
		return this.budget.usedBytes();
	}

	/** The budget this allocator draws on. */
	public MemoryBudget budget() {
		return this.budget;
	}

	@Override
	public Allocation allocate(long bytes) {
		MemoryAllocator.requirePositiveSize(bytes);
		if (!this.budget.tryDraw(bytes)) {
			throw new GpuOutOfMemoryException(OutOfMemoryDiagnostic.of(kind(), bytes, memoryInfo(),
					this.budget.limitBytes(), "limit reached: " + this.budget + " allocated; the limit is "
							+ this.budget.origin()));
		}
		try {
			return super.allocate(bytes);
		}
		catch (RuntimeException ex) {
			this.budget.giveBack(bytes);
			throw ex;
		}
	}

	@Override
	public void free(Allocation allocation) {
		super.free(allocation);
		this.budget.giveBack(allocation.size());
	}

	@Override
	public String describe() {
		return super.describe() + ", limit " + ByteSizes.format(this.budget.limitBytes());
	}

}
