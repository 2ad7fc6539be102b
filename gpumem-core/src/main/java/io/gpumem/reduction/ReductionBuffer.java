package io.gpumem.reduction;

import java.util.Arrays;
import java.util.Objects;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryKind;
import io.gpumem.stream.GpuStream;

/**
 * A device buffer of reduction slots lent by a {@link ReductionBufferCache}, every slot at its op's
 * identity when lent: kernels take it by {@code unwrap}, the host reads results through pinned memory
 * with {@link #readResult(int)}. Closing it returns it to the cache.
 */
public final class ReductionBuffer extends GpuBuffer {

	private final ReductionBufferCache cache;

	private final ReductionKey key;

	private volatile Allocation allocation;

	ReductionBuffer(ReductionBufferCache cache, ReductionKey key, Allocation allocation) {
		this.cache = cache;
		this.key = key;
		this.allocation = allocation;
	}

	/** The element type, slot count and op of this buffer. */
	public ReductionKey key() {
		return this.key;
	}

	@Override
	public long size() {
		return this.key.bytes();
	}

	@Override
	public MemoryKind kind() {
		return MemoryKind.DEVICE;
	}

	@Override
	public boolean isClosed() {
		return this.allocation == null;
	}

	/**
	 * The value in a slot, copied to the host through pinned memory: an {@code Integer}, {@code Long},
	 * {@code Float} or {@code Double} as the element type is.
	 * @throws IndexOutOfBoundsException if {@code slot} is not a slot of this buffer
	 */
	public Number readResult(int slot) {
		return readResult(slot, null);
	}

	/**
	 * The value in a slot, copied on {@code stream} after the work already enqueued there (the kernel that
	 * wrote it), through pinned memory; the cache's own stream when {@code stream} is {@code null}.
	 * @throws IndexOutOfBoundsException if {@code slot} is not a slot of this buffer
	 */
	public Number readResult(int slot, GpuStream stream) {
		long bits = this.cache.readSlot(this, Objects.checkIndex(slot, this.key.slots()), stream);
		return switch (this.key.type()) {
			case INT -> (int) bits;
			case LONG -> bits;
			case FLOAT -> Float.intBitsToFloat((int) bits);
			case DOUBLE -> Double.longBitsToDouble(bits);
			case BYTE -> throw new IllegalStateException("no byte reductions");
		};
	}

	/** Sets every slot back to the op's identity, as on every acquire. */
	public void reset() {
		long identity = this.key.op().identityBits(this.key.type());
		if (this.key.type().bytes() == Integer.BYTES) {
			fillInts(0, this.key.slots(), (int) identity);
		}
		else if (identity == 0) {
			fill((byte) 0);
		}
		else {
			long[] identities = new long[this.key.slots()];
			Arrays.fill(identities, identity);
			copyFrom(identities);
		}
	}

	@Override
	public void close() {
		Allocation released;
		synchronized (this) {
			released = this.allocation;
			this.allocation = null;
		}
		if (released != null) {
			this.cache.release(this.key, released);
		}
	}

	@Override
	protected Allocation allocation() {
		Allocation current = this.allocation;
		if (current == null) {
			throw new IllegalStateException("reduction buffer " + this.key + " used after close");
		}
		return current;
	}

	@Override
	public String toString() {
		return "ReductionBuffer[" + this.key + (isClosed() ? ", closed" : "") + "]";
	}

}
