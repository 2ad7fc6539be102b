package io.gpumem.pool;

import java.util.function.UnaryOperator;

import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;

/**
 * The four setups a pool runs on in the tests that must hold on every one: the host backend and the CUDA backend over
 * the fake driver, each with fixed segments ({@code cuMemAlloc}'s) and with expandable ones (granules mapped into a
 * reserved range).
 */
public enum PoolSetup {

	HOST_FIXED(false, false), HOST_EXPANDABLE(false, true), CUDA_FIXED(true, false), CUDA_EXPANDABLE(true, true);

	private final boolean cuda;

	private final boolean expandable;

	PoolSetup(boolean cuda, boolean expandable) {
		this.cuda = cuda;
		this.expandable = expandable;
	}

	/** Whether this setup's pools map granules into reserved ranges. */
	public boolean expandable() {
		return this.expandable;
	}

	/** A device of {@code capacity} bytes on this setup's backend. */
	public GpuBackend open(long capacity) {
		return this.cuda ? CudaBackend.open(new FakeCudaDriver(capacity), 0) : new HostBackend(capacity);
	}

	/** The device memory of {@code backend} this setup's pools draw on: its segments, or its virtual memory. */
	public MemoryAllocator allocator(GpuBackend backend) {
		return this.expandable ? backend.virtualMemory().allocator() : backend.allocator(MemoryKind.DEVICE);
	}

	/** A pool named {@code name} on {@code backend} as this setup draws, configured by {@code config}. */
	public StratifiedMemoryPool pool(GpuBackend backend, String name, UnaryOperator<PoolConfig.Builder> config) {
		return new StratifiedMemoryPool(allocator(backend), config.apply(PoolConfig.builder(name)).build());
	}

}
