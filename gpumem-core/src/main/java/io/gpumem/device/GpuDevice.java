package io.gpumem.device;

import java.util.Objects;
import java.util.Optional;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.allocator.MemoryBudget;
import io.gpumem.backend.GpuBackend;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.pressure.PressureHandler;
import io.gpumem.reduction.ReductionBufferCache;
import io.gpumem.transfer.Transfers;

/**
 * One GPU as gpumem manages it: its backend, the budget of its memory, its pools and what works on them
 * (transfers, the reduction-buffer cache, the pressure handler, admission of GPU work). Every part belongs
 * to this device alone: its pinned pool is allocated in this device's context, its pressure handler
 * watches this device and shrinks only its pools.
 */
public final class GpuDevice implements AutoCloseable {

	private final GpuBackend backend;

	private final StratifiedMemoryPool devicePool;

	private final MemoryBudget budget;

	private final StratifiedMemoryPool pinnedPool;

	private final StratifiedMemoryPool unifiedPool;

	private final Transfers transfers;

	private final ReductionBufferCache reductionCache;

	private final PressureHandler pressure;

	private final GpuAdmission admission;

	private GpuDevice(Builder builder) {
		this.backend = builder.backend;
		this.devicePool = builder.devicePool;
		this.budget = builder.budget;
		this.pinnedPool = builder.pinnedPool;
		this.unifiedPool = builder.unifiedPool;
		this.transfers = builder.transfers;
		this.reductionCache = builder.reductionCache;
		this.pressure = builder.pressure;
		this.admission = builder.admission;
	}

	/** A device of {@code backend} whose device memory {@code devicePool} lends; the other parts are optional. */
	public static Builder builder(GpuBackend backend, StratifiedMemoryPool devicePool) {
		return new Builder(backend, devicePool);
	}

	/** The device's ordinal, as CUDA numbers it. */
	public int ordinal() {
		return this.backend.deviceId();
	}

	public GpuBackend backend() {
		return this.backend;
	}

	public StratifiedMemoryPool devicePool() {
		return this.devicePool;
	}

	public Optional<MemoryBudget> budget() {
		return Optional.ofNullable(this.budget);
	}

	public Optional<StratifiedMemoryPool> pinnedPool() {
		return Optional.ofNullable(this.pinnedPool);
	}

	public Optional<StratifiedMemoryPool> unifiedPool() {
		return Optional.ofNullable(this.unifiedPool);
	}

	public Optional<Transfers> transfers() {
		return Optional.ofNullable(this.transfers);
	}

	public Optional<ReductionBufferCache> reductionCache() {
		return Optional.ofNullable(this.reductionCache);
	}

	public Optional<PressureHandler> pressure() {
		return Optional.ofNullable(this.pressure);
	}

	public Optional<GpuAdmission> admission() {
		return Optional.ofNullable(this.admission);
	}

	/**
	 * How loaded the device is, from 0 to 1: the bytes its device and unified pools lend, against the budget
	 * when there is one and the device's total memory otherwise.
	 */
	public double load() {
		long lent = this.devicePool.usedBytes() + ((this.unifiedPool != null) ? this.unifiedPool.usedBytes() : 0);
		long capacity = (this.budget != null) ? this.budget.limitBytes() : this.backend.memoryInfo().totalBytes();
		return (capacity > 0) ? Math.min(1.0, (double) lent / capacity) : 1.0;
	}

	/**
	 * Closes every part, the pressure handler first and the backend last; what the pools lent must have
	 * been returned.
	 */
	@Override
	public void close() {
		if (this.pressure != null) {
			this.pressure.close();
		}
		if (this.reductionCache != null) {
			this.reductionCache.close();
		}
		if (this.unifiedPool != null) {
			this.unifiedPool.close();
		}
		if (this.pinnedPool != null) {
			this.pinnedPool.close();
		}
		this.devicePool.close();
		this.backend.close();
	}

	@Override
	public String toString() {
		return "device " + ordinal() + " (" + this.backend.describe() + ")";
	}

	/** Gathers a device's parts. */
	public static final class Builder {

		private final GpuBackend backend;

		private final StratifiedMemoryPool devicePool;

		private MemoryBudget budget;

		private StratifiedMemoryPool pinnedPool;

		private StratifiedMemoryPool unifiedPool;

		private Transfers transfers;

		private ReductionBufferCache reductionCache;

		private PressureHandler pressure;

		private GpuAdmission admission;

		private Builder(GpuBackend backend, StratifiedMemoryPool devicePool) {
			this.backend = Objects.requireNonNull(backend, "backend");
			this.devicePool = Objects.requireNonNull(devicePool, "devicePool");
		}

		public Builder budget(MemoryBudget budget) {
			this.budget = budget;
			return this;
		}

		public Builder pinnedPool(StratifiedMemoryPool pinnedPool) {
			this.pinnedPool = pinnedPool;
			return this;
		}

		public Builder unifiedPool(StratifiedMemoryPool unifiedPool) {
			this.unifiedPool = unifiedPool;
			return this;
		}

		public Builder transfers(Transfers transfers) {
			this.transfers = transfers;
			return this;
		}

		public Builder reductionCache(ReductionBufferCache reductionCache) {
			this.reductionCache = reductionCache;
			return this;
		}

		public Builder pressure(PressureHandler pressure) {
			this.pressure = pressure;
			return this;
		}

		public Builder admission(GpuAdmission admission) {
			this.admission = admission;
			return this;
		}

		public GpuDevice build() {
			return new GpuDevice(this);
		}

	}

}
