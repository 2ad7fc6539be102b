package io.gpumem.device;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.allocator.MemoryBudget;
import io.gpumem.backend.GpuBackend;
import io.gpumem.limit.DeviceLimit;
import io.gpumem.memory.DeviceFailure;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.pool.MemoryCache;
import io.gpumem.pool.MemoryPool;
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

	private final MemoryPool devicePool;

	private final MemoryBudget budget;

	private final DeviceLimit limit;

	private final MemoryPool pinnedPool;

	private final MemoryPool unifiedPool;

	private final Transfers transfers;

	private final ReductionBufferCache reductionCache;

	private final PressureHandler pressure;

	private final GpuAdmission admission;

	private GpuDevice(Builder builder) {
		this.backend = builder.backend;
		this.devicePool = builder.devicePool;
		this.budget = builder.budget;
		this.limit = builder.limit;
		this.pinnedPool = builder.pinnedPool;
		this.unifiedPool = builder.unifiedPool;
		this.transfers = builder.transfers;
		this.reductionCache = builder.reductionCache;
		this.pressure = builder.pressure;
		this.admission = builder.admission;
		if (this.pressure != null) {
			this.backend.health().onFailure((failure) -> this.pressure.close());
		}
	}

	/** A device of {@code backend} whose device memory {@code devicePool} lends; the other parts are optional. */
	public static Builder builder(GpuBackend backend, MemoryPool devicePool) {
		return new Builder(backend, devicePool);
	}

	/** The device's ordinal, as CUDA numbers it. */
	public int ordinal() {
		return this.backend.deviceId();
	}

	public GpuBackend backend() {
		return this.backend;
	}

	public MemoryPool devicePool() {
		return this.devicePool;
	}

	public Optional<MemoryBudget> budget() {
		return Optional.ofNullable(this.budget);
	}

	/** The most of the device this process may use and its source, which the budget is a fraction of. */
	public Optional<DeviceLimit> limit() {
		return Optional.ofNullable(this.limit);
	}

	public Optional<MemoryPool> pinnedPool() {
		return Optional.ofNullable(this.pinnedPool);
	}

	public Optional<MemoryPool> unifiedPool() {
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

	/** The device's pools, each lending memory of its own kind: device, pinned, unified. */
	public List<MemoryPool> memoryPools() {
		List<MemoryPool> pools = new ArrayList<>(List.of(this.devicePool));
		pinnedPool().ifPresent(pools::add);
		unifiedPool().ifPresent(pools::add);
		return pools;
	}

	/** The device's pools and the reduction cache over the device pool, as they are shown and trimmed. */
	public List<MemoryCache> pools() {
		List<MemoryCache> pools = new ArrayList<>(memoryPools());
		reductionCache().ifPresent(pools::add);
		return pools;
	}

	/**
	 * Whether the device failed for good, and how: then its parts refuse work and its pressure handler has
	 * stopped.
	 */
	public Optional<DeviceFailure> failure() {
		return this.backend.health().failure();
	}

	/**
	 * How loaded the device is, from 0 to 1: the bytes its device and unified pools lend, against the budget
	 * when there is one and the device's total memory otherwise; 1 for a failed device without a budget.
	 */
	public double load() {
		long lent = this.devicePool.usedBytes() + ((this.unifiedPool != null) ? this.unifiedPool.usedBytes() : 0);
		long capacity = (this.budget != null) ? this.budget.limitBytes()
				: this.backend.workingMemoryInfo().map(MemoryInfo::totalBytes).orElse(0L);
		return (capacity > 0) ? Math.min(1.0, (double) lent / capacity) : 1.0;
	}

	/**
	 * Closes every part, the pressure handler first, the pools in the reverse of {@link #pools()} and the
	 * backend last; what the pools lent must have been returned.
	 */
	@Override
	public void close() {
		if (this.pressure != null) {
			this.pressure.close();
		}
		List<MemoryCache> pools = pools();
		for (int i = pools.size() - 1; i >= 0; i--) {
			pools.get(i).close();
		}
		this.backend.close();
	}

	@Override
	public String toString() {
		return "device " + ordinal() + " (" + this.backend.describe() + ")";
	}

	/** Gathers a device's parts. */
	public static final class Builder {

		private final GpuBackend backend;

		private final MemoryPool devicePool;

		private MemoryBudget budget;

		private DeviceLimit limit;

		private MemoryPool pinnedPool;

		private MemoryPool unifiedPool;

		private Transfers transfers;

		private ReductionBufferCache reductionCache;

		private PressureHandler pressure;

		private GpuAdmission admission;

		private Builder(GpuBackend backend, MemoryPool devicePool) {
			this.backend = Objects.requireNonNull(backend, "backend");
			this.devicePool = Objects.requireNonNull(devicePool, "devicePool");
		}

		public Builder budget(MemoryBudget budget) {
			this.budget = budget;
			return this;
		}

		public Builder limit(DeviceLimit limit) {
			this.limit = limit;
			return this;
		}

		public Builder pinnedPool(MemoryPool pinnedPool) {
			this.pinnedPool = pinnedPool;
			return this;
		}

		public Builder unifiedPool(MemoryPool unifiedPool) {
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
