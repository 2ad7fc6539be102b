package io.gpumem.cuda;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.DeviceHealth;
import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.memory.MemoryKind;
import io.gpumem.stream.GpuStream;
import io.gpumem.stream.StreamOrder;

/**
 * Allocates device memory from CUDA's stream-ordered allocator: a pool of the device's memory that
 * {@code cuMemAllocFromPoolAsync} draws on and {@code cuMemFreeAsync} gives back to, in the order of a
 * stream, with no synchronization of the device.
 * <p>
 * <b>Which stream.</b> A block is allocated on the stream bound to the calling thread
 * ({@link StreamOrder}) when it is a stream of this device, and is then ready in that stream's order with
 * no wait on the host. Otherwise it is allocated on the allocator's own stream, which is synchronized, so
 * that the block is ready for every stream and for the synchronous copies. Blocks are freed on the
 * allocator's stream (their work has completed: a pool frees only closed buffers), which is synchronized,
 * and the pool trimmed to what its live blocks use ({@code cuMemPoolTrimTo}): when {@link #free} returns,
 * the memory is the device's again, as after {@code cuMemFree}, without {@code cuMemFree}'s wait for all
 * of the device's work.
 * <p>
 * <b>The pool is one of its own.</b> JCuda 12.6 has no {@code cuDeviceGetDefaultMemPool} (nor
 * {@code cuDeviceGetMemPool}), so the device's default pool cannot be named, trimmed or measured; the
 * allocator creates a pool with the default pool's properties ({@code cuMemPoolCreate}: pinned device
 * memory located on the device), destroyed with the allocator. Nor does it have
 * {@code cuMemPoolSetAttribute}: the pool's release threshold stays 0, and at every synchronization of
 * the device's work the driver gives back all the memory the pool holds unused. What a threshold would
 * keep, the gpumem pool above keeps instead, in its free lists and free segments, within
 * {@code max-cached}: the driver sees a free only when gpumem trims.
 */
public final class CudaAsyncAllocator implements MemoryAllocator, AutoCloseable {

	private final CudaDevice device;

	private final Object pool;

	private final Object stream;

	private final AtomicLong allocatedBytes = new AtomicLong();

	private final LongAdder streamOrdered = new LongAdder();

	private volatile boolean closed;

	CudaAsyncAllocator(CudaDevice device) {
		this.device = device;
		CudaDriver driver = device.bind();
		this.pool = driver.createMemoryPool(device.ordinal());
		try {
			this.stream = driver.createStream();
		}
		catch (RuntimeException ex) {
			driver.destroyMemoryPool(this.pool);
			throw ex;
		}
	}

	@Override
	public MemoryKind kind() {
		return MemoryKind.DEVICE;
	}

	/**
	 * Allocates from the pool on the thread's bound stream of this device, or on the allocator's own,
	 * synchronized.
	 */
	@Override
	public Allocation allocate(long bytes) {
		MemoryAllocator.requirePositiveSize(bytes);
		CudaDriver driver = bind();
		Object ordered = boundStream();
		Object pointer;
		try {
			pointer = driver.allocateFromPool(this.pool, bytes, (ordered != null) ? ordered : this.stream);
		}
		catch (CudaException ex) {
			throw CudaAllocator.refusal(ex, this, bytes);
		}
		this.device.allocated();
		if (ordered != null) {
			this.streamOrdered.increment();
		}
		else {
			try {
				driver.synchronizeStream(this.stream);
			}
			catch (RuntimeException ex) {
				this.device.free((bound) -> bound.freeAsync(pointer, this.stream));
				throw ex;
			}
		}
		this.allocatedBytes.addAndGet(bytes);
		return new CudaDeviceAllocation(this, this.device, MemoryKind.DEVICE, pointer, bytes);
	}

	/**
	 * Gives the block back to the pool and the pool's unused memory back to the device; once the
	 * allocator is closed, straight back to the device, as CUDA does for a destroyed pool's blocks.
	 */
	@Override
	public synchronized void free(Allocation allocation) {
		if (!(allocation instanceof CudaDeviceAllocation block) || block.allocator() != this) {
			throw new IllegalArgumentException("not a block of the stream-ordered pool of device "
					+ this.device.ordinal() + ": " + allocation);
		}
		Object pointer = block.markFreed();
		this.allocatedBytes.addAndGet(-block.size());
		this.device.free((driver) -> {
			if (this.closed) {
				driver.freeAsync(pointer, null);
				driver.synchronizeStream(null);
				return;
			}
			driver.freeAsync(pointer, this.stream);
			driver.synchronizeStream(this.stream);
			driver.trimMemoryPool(this.pool, this.allocatedBytes.get());
		});
	}

	@Override
	public boolean streamOrdered() {
		return true;
	}

	@Override
	public DeviceHealth health() {
		return this.device.health();
	}

	@Override
	public MemoryInfo memoryInfo() {
		return this.device.bind().memoryInfo();
	}

	/** Bytes of the blocks allocated and not yet freed. */
	public long allocatedBytes() {
		return this.allocatedBytes.get();
	}

	/** Blocks allocated on a thread's bound stream, without a wait on the host. */
	public long streamOrderedAllocations() {
		return this.streamOrdered.sum();
	}

	@Override
	public String describe() {
		return "cuda stream-ordered pool on device " + this.device.ordinal() + " (" + this.device.name() + ", "
				+ ByteSizes.format(memoryInfo().totalBytes()) + ")";
	}

	/**
	 * Destroys the pool; blocks still allocated go back to the device as they are freed, as CUDA does
	 * for a pool destroyed with outstanding allocations. A second close does nothing.
	 */
	@Override
	public synchronized void close() {
		if (!this.closed) {
			this.closed = true;
			CudaDriver driver = this.device.bind();
			try {
				driver.synchronizeStream(this.stream);
				driver.destroyStream(this.stream);
			}
			finally {
				driver.destroyMemoryPool(this.pool);
			}
		}
	}

	private CudaDriver bind() {
		if (this.closed) {
			throw new IllegalStateException("the stream-ordered pool of device " + this.device.ordinal() + " is closed");
		}
		return this.device.bind();
	}

	/** The native handle of the thread's bound stream when it is a stream of this device; null otherwise. */
	private Object boundStream() {
		GpuStream bound = StreamOrder.current();
		return (bound instanceof CudaStream cuda && cuda.device() == this.device && !cuda.isClosed())
				? cuda.handle(this.device) : null;
	}

}
