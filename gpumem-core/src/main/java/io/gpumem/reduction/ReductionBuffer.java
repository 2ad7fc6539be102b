package io.gpumem.reduction;

import java.util.Arrays;
import java.util.Objects;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.stream.GpuStream;

/**
 * A device buffer of reduction slots lent by a {@link ReductionBufferCache}, every slot at its op's
 * identity when lent: kernels take it as an argument, the host reads results with
 * {@link #readResult(int, GpuStream)}. Closing it sets its memory aside for its key; one acquired on a stream
 * is set aside once that stream's work so far has completed, so that no kernel still writing it meets the
 * next request's reset.
 */
public final class ReductionBuffer extends GpuBuffer {

	private final ReductionBufferCache cache;

	private final ReductionKey key;

	private final GpuStream stream;

	/** The device pool's buffer behind this one; null once closed. */
	private volatile PooledBuffer pooled;

	/** The buffer lent, kept after a close, so that a use begun before it ends on the buffer it began on. */
	private final PooledBuffer lent;

	ReductionBuffer(ReductionBufferCache cache, ReductionKey key, PooledBuffer pooled, GpuStream stream) {
		this.cache = cache;
		this.key = key;
		this.pooled = pooled;
		this.lent = pooled;
		this.stream = stream;
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
		return this.pooled == null;
	}

	/**
	 * The value in a slot as the device holds it now, copied synchronously: an {@code Integer},
	 * {@code Long}, {@code Float} or {@code Double} as the element type is. Work of gpumem's streams is not
	 * waited for: synchronize the stream that wrote the slot first, or use {@link #readResult(int, GpuStream)}.
	 * @throws IndexOutOfBoundsException if {@code slot} is not a slot of this buffer
	 */
	public Number readResult(int slot) {
		return decode(this.cache.readSlot(this, Objects.checkIndex(slot, this.key.slots()), null));
	}

	/**
	 * The value in a slot, copied on {@code stream} after the work already enqueued there (the kernel that
	 * wrote it), through pinned memory.
	 * @throws IndexOutOfBoundsException if {@code slot} is not a slot of this buffer
	 */
	public Number readResult(int slot, GpuStream stream) {
		Objects.requireNonNull(stream, "stream");
		return decode(this.cache.readSlot(this, Objects.checkIndex(slot, this.key.slots()), stream));
	}

	private Number decode(long bits) {
		return switch (this.key.type()) {
			case INT -> (int) bits;
			case LONG -> bits;
			case FLOAT -> Float.intBitsToFloat((int) bits);
			case DOUBLE -> Double.longBitsToDouble(bits);
			case BYTE -> throw new IllegalStateException("no byte reductions");
		};
	}

	/**
	 * Sets every slot back to the op's identity, as on every acquire: on the stream the buffer was
	 * acquired on, after its work so far, or at once for a buffer acquired without one.
	 */
	public void reset() {
		long identity = this.key.op().identityBits(this.key.type());
		if (this.stream == null) {
			writeIdentities(this, this.key, identity);
		}
		else if (identity == 0) {
			this.stream.fill(this, 0, size(), (byte) 0);
		}
		else {
			this.cache.resetOn(this.stream, this, identity);
		}
	}

	/** Writes {@code identity} into the first {@code key.slots()} elements of {@code target}, at once. */
	static void writeIdentities(GpuBuffer target, ReductionKey key, long identity) {
		if (key.type().bytes() == Integer.BYTES) {
			target.fillInts(0, key.slots(), (int) identity);
		}
		else if (identity == 0) {
			target.fill(0, key.bytes(), (byte) 0);
		}
		else {
			long[] identities = new long[key.slots()];
			Arrays.fill(identities, identity);
			target.copyFromArray(0, identities, 0, identities.length);
		}
	}

	@Override
	public void close() {
		PooledBuffer released;
		synchronized (this) {
			released = this.pooled;
			this.pooled = null;
		}
		if (released != null) {
			try {
				if (this.stream != null && !this.stream.isClosed()) {
					this.stream.synchronize();
				}
			}
			catch (RuntimeException | Error ex) {
				giveBackAfterTheStream(released, ex);
				throw ex;
			}
			this.cache.release(this.key, released);
		}
	}

	/** Where the wait for the stream failed, the cache takes the buffer back after the stream's work. */
	private void giveBackAfterTheStream(PooledBuffer released, Throwable failedWait) {
		try {
			this.cache.releaseAfter(this.key, released, this.stream);
		}
		catch (RuntimeException ex) {
			failedWait.addSuppressed(ex);
		}
	}

	@Override
	protected Allocation allocation() {
		return allocationOf(current());
	}

	@Override
	protected Allocation beginUse() {
		return beginUseOf(current());
	}

	@Override
	protected void endUse() {
		endUseOf(this.lent);
	}

	private PooledBuffer current() {
		PooledBuffer current = this.pooled;
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
