package io.gpumem.cuda;

import java.lang.System.Logger.Level;
import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.ByteBufferAccess;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.MemoryKind;

/**
 * A block of page-locked host memory, reached through a direct {@link ByteBuffer} view and guarded
 * against use after free.
 * <p>
 * Every copy and fill enters the block's {@link Guard}; freeing it marks it freed at once (later uses
 * throw) and gives the memory back to the driver when the last copy in progress has left. A view handed
 * out by {@code unwrap(ByteBuffer.class)} cannot be guarded, so once one has escaped the memory is
 * given back only when the garbage collector finds every view unreachable: a stale view can read stale
 * data, but never unmapped memory.
 */
final class CudaPinnedAllocation implements Allocation, CudaMemory {

	private final Guard guard;

	private final ByteBuffer view;

	private final Object pointer;

	private final boolean slice;

	CudaPinnedAllocation(CudaDevice device, Object pointer, long size) {
		this(new Guard(device, pointer, device.bind().pinnedView(pointer, size)), null, pointer, false);
	}

	private CudaPinnedAllocation(Guard guard, ByteBuffer view, Object pointer, boolean slice) {
		this.guard = guard;
		this.view = (view != null) ? view : guard.root;
		this.pointer = pointer;
		this.slice = slice;
	}

	@Override
	public long size() {
		return this.view.capacity();
	}

	@Override
	public MemoryKind kind() {
		return MemoryKind.PINNED;
	}

	@Override
	public CudaDevice device() {
		return this.guard.device;
	}

	@Override
	public Object pointer() {
		return this.pointer;
	}

	@Override
	public <T> T unwrap(Class<T> type) {
		this.guard.enter();
		try {
			if (type == ByteBuffer.class) {
				this.guard.viewEscaped = true;
				return type.cast(this.view.duplicate().order(this.view.order()));
			}
			if (type.isInstance(this.pointer)) {
				return type.cast(this.pointer);
			}
			if (type.isInstance(this)) {
				return type.cast(this);
			}
		}
		finally {
			this.guard.exit();
		}
		throw new IllegalArgumentException(
				"a CUDA PINNED allocation unwraps to java.nio.ByteBuffer or jcuda.Pointer, not " + type.getName());
	}

	@Override
	public void copyFromHost(long byteOffset, Object array, int arrayIndex, int count, ElementType type) {
		this.guard.enter();
		try {
			ByteBufferAccess.copyIn(this.view, byteOffset, array, arrayIndex, count, type);
		}
		finally {
			this.guard.exit();
		}
	}

	@Override
	public void copyToHost(long byteOffset, Object array, int arrayIndex, int count, ElementType type) {
		this.guard.enter();
		try {
			ByteBufferAccess.copyOut(this.view, byteOffset, array, arrayIndex, count, type);
		}
		finally {
			this.guard.exit();
		}
	}

	/** {@inheritDoc} Into device memory, in one {@code cuMemcpyHtoD}. */
	@Override
	public void copyTo(long byteOffset, Allocation target, long targetOffset, long bytes) {
		if (!(target instanceof CudaDeviceAllocation device)) {
			Allocation.super.copyTo(byteOffset, target, targetOffset, bytes);
			return;
		}
		Object devicePointer = device.usablePointer();
		this.guard.enter();
		try {
			CudaDriver driver = this.guard.device.bind();
			driver.copyHostToDeviceAsync(driver.offset(devicePointer, targetOffset),
					driver.offset(this.pointer, byteOffset), bytes, null);
			driver.synchronizeStream(null);
		}
		finally {
			this.guard.exit();
		}
	}

	/** Copies {@code bytes} bytes of device memory at {@code device}, from {@code deviceOffset}, into this block. */
	void copyFromDevice(long byteOffset, Object device, long deviceOffset, long bytes) {
		this.guard.enter();
		try {
			CudaDriver driver = this.guard.device.bind();
			driver.copyDeviceToHostAsync(driver.offset(this.pointer, byteOffset), driver.offset(device, deviceOffset),
					bytes, null);
			driver.synchronizeStream(null);
		}
		finally {
			this.guard.exit();
		}
	}

	@Override
	public void fill(long byteOffset, long byteCount, byte value) {
		this.guard.enter();
		try {
			ByteBufferAccess.fill(this.view, byteOffset, byteCount, value);
		}
		finally {
			this.guard.exit();
		}
	}

	@Override
	public void fillInts(long byteOffset, long count, int value) {
		this.guard.enter();
		try {
			ByteBufferAccess.fillInts(this.view, byteOffset, count, value);
		}
		finally {
			this.guard.exit();
		}
	}

	@Override
	public Allocation slice(long byteOffset, long bytes) {
		this.guard.enter();
		try {
			return new CudaPinnedAllocation(this.guard,
					this.view.slice(Math.toIntExact(byteOffset), Math.toIntExact(bytes)).order(this.view.order()),
					this.guard.device.bind().offset(this.pointer, byteOffset), true);
		}
		finally {
			this.guard.exit();
		}
	}

	/** Marks the block freed; the driver gets the memory back as soon as nothing can reach it. */
	void free() {
		if (this.slice) {
			throw new IllegalArgumentException("a slice is freed with the block it was cut from: " + this);
		}
		this.guard.free();
	}

	@Override
	public String toString() {
		return "CudaPinnedAllocation[" + size() + " bytes" + (this.guard.isFreed() ? ", freed" : "") + "]";
	}

	/**
	 * The use count of one pinned block: the sign bit says freed, the rest counts the accesses in
	 * progress. Whoever leaves it freed with no access in progress gives the memory back.
	 */
	static final class Guard {

		private static final int FREED = Integer.MIN_VALUE;

		private final CudaDevice device;

		private final Object pointer;

		private final ByteBuffer root;

		private final AtomicInteger state = new AtomicInteger();

		private volatile boolean viewEscaped;

		Guard(CudaDevice device, Object pointer, ByteBuffer root) {
			this.device = device;
			this.pointer = pointer;
			this.root = root;
		}

		void enter() {
			int state;
			do {
				state = this.state.get();
				if (state < 0) {
					throw new IllegalStateException(
							"CUDA PINNED allocation of " + this.root.capacity() + " bytes used after free");
				}
			}
			while (!this.state.compareAndSet(state, state + 1));
		}

		void exit() {
			if (this.state.decrementAndGet() == FREED) {
				giveBack();
			}
		}

		void free() {
			int previous = this.state.getAndUpdate((state) -> state | FREED);
			if (previous < 0) {
				throw new IllegalStateException(
						"CUDA PINNED allocation of " + this.root.capacity() + " bytes freed twice");
			}
			if (previous == 0) {
				giveBack();
			}
		}

		boolean isFreed() {
			return this.state.get() < 0;
		}

		private void giveBack() {
			if (this.viewEscaped) {
				Views.CLEANER.register(this.root, new Release(this.device, this.pointer));
			}
			else {
				this.device.free((driver) -> driver.freePinned(this.pointer));
			}
		}

	}

	/** Gives back a block whose views became unreachable; holds no view itself, so that they can. */
	private record Release(CudaDevice device, Object pointer) implements Runnable {

		@Override
		public void run() {
			try {
				this.device.free((driver) -> driver.freePinned(this.pointer));
			}
			catch (RuntimeException ex) {
				System.getLogger(CudaPinnedAllocation.class.getName())
					.log(Level.WARNING, "could not give back pinned memory after its views became unreachable", ex);
			}
		}

	}

	/** The cleaner that gives back pinned blocks whose views escaped. */
	private static final class Views {

		static final Cleaner CLEANER = Cleaner.create();

	}

}
