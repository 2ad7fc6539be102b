package io.gpumem.allocator;

import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

import io.gpumem.config.InvalidSettingException;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.OutOfMemoryDiagnostic;

/**
 * Refuses some allocations with a {@link GpuOutOfMemoryException}, every Nth call or with a
 * probability, so that tests can drive the failure paths of what sits above it.
 */
public final class FaultInjectingAllocator extends AllocatorDecorator {

	private final long everyNth;

	private final double probability;

	private final SplittableRandom random;

	private final AtomicLong calls = new AtomicLong();

	private final AtomicLong injected = new AtomicLong();

	private FaultInjectingAllocator(MemoryAllocator upstream, long everyNth, double probability, long seed) {
		super(upstream);
		this.everyNth = everyNth;
		this.probability = probability;
		this.random = new SplittableRandom(seed);
	}

	/** Fails calls number n, 2n, 3n, ... */
	public static FaultInjectingAllocator everyNth(MemoryAllocator upstream, long n) {
		if (n <= 0) {
			throw new InvalidSettingException("every-nth", n, "must be positive");
		}
		return new FaultInjectingAllocator(upstream, n, 0.0, 0);
	}

	/** Fails each call with probability {@code p}, drawn from a generator seeded with {@code seed}. */
	public static FaultInjectingAllocator withProbability(MemoryAllocator upstream, double p, long seed) {
		if (!(p >= 0.0 && p <= 1.0)) {
			throw new InvalidSettingException("probability", p, "must lie in [0, 1]");
		}
		return new FaultInjectingAllocator(upstream, 0, p, seed);
	}

	/** How many allocations were refused on purpose. */
	public long injectedFailures() {
		return this.injected.get();
	}

	@Override
	public Allocation allocate(long bytes) {
		MemoryAllocator.requirePositiveSize(bytes);
		if (shouldFail()) {
			this.injected.incrementAndGet();
			throw new GpuOutOfMemoryException(
					OutOfMemoryDiagnostic.of(kind(), bytes, memoryInfo(), -1, "injected fault"));
		}
		return super.allocate(bytes);
	}

	private boolean shouldFail() {
		long call = this.calls.incrementAndGet();
		if (this.everyNth > 0) {
			return call % this.everyNth == 0;
		}
		synchronized (this.random) {
			return this.random.nextDouble() < this.probability;
		}
	}

}
