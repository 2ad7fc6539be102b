package io.gpumem.buffer;

import java.lang.ref.Reference;
import java.lang.reflect.Array;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;
import java.util.function.Supplier;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.MemoryKind;

/**
 * A block of GPU (or emulated) memory lent to its user until {@link #close()}: the handle kernels and
 * copies work on.
 * <p>
 * Copies to and from Java arrays are checked against the buffer's {@link #size()} and the array's
 * bounds. {@code close()} is idempotent and returns the memory to where it came from; any use after it
 * throws an {@link IllegalStateException} and never touches the memory. A buffer is meant to be used by
 * one thread at a time; handing it to another thread needs the usual happens-before edge.
 */
public abstract class GpuBuffer implements AutoCloseable {

	/** The usable size in bytes: what was asked for, which may be less than the block behind it. */
	public abstract long size();

	/** The kind of memory behind this buffer. */
	public abstract MemoryKind kind();

	/** Whether {@link #close()} has been called. */
	public abstract boolean isClosed();

	/** Returns the memory to where it came from; a second call does nothing. */
	@Override
	public abstract void close();

	/**
	 * The memory behind this buffer.
	 * @throws IllegalStateException if the buffer is closed
	 */
	protected abstract Allocation allocation();

	/**
	 * The memory behind this buffer, for a copy or a fill made now, which {@link #endUse()} ends: its owner may wait
	 * for the uses under way before it takes the memory away (a pool's sleep).
	 * @throws IllegalStateException if the buffer is closed
	 */
	protected Allocation beginUse() {
		return allocation();
	}

	/** Ends the use {@link #beginUse()} began, on the same thread. */
	protected void endUse() {
	}

	/**
	 * The native handle of the memory, as JDBC's {@code unwrap}: a native-order {@link ByteBuffer} of
	 * {@link #size()} bytes on the host backend. The handle is a view: it must not be used after close.
	 * @throws IllegalArgumentException if the backend has no handle of that type
	 */
	public <T> T unwrap(Class<T> type) {
		try {
			T handle = allocation().unwrap(type);
			if (handle instanceof ByteBuffer buffer) {
				return type.cast(buffer.slice(0, Math.toIntExact(size())).order(ByteOrder.nativeOrder()));
			}
			return handle;
		}
		finally {
			Reference.reachabilityFence(this);
		}
	}

	public void copyFrom(byte[] src) {
		copyFrom(0, src, 0, src.length);
	}

	public void copyFrom(int[] src) {
		copyFrom(0, src, 0, src.length);
	}

	public void copyFrom(long[] src) {
		copyFrom(0, src, 0, src.length);
	}

	public void copyFrom(float[] src) {
		copyFrom(0, src, 0, src.length);
	}

	public void copyFrom(double[] src) {
		copyFrom(0, src, 0, src.length);
	}

	/** Copies {@code length} elements of {@code src} from {@code srcIndex} into this buffer at {@code byteOffset}. */
	public void copyFrom(long byteOffset, byte[] src, int srcIndex, int length) {
		copyIn(byteOffset, src, src.length, srcIndex, length, ElementType.BYTE);
	}

	/** Copies {@code length} elements of {@code src} from {@code srcIndex} into this buffer at {@code byteOffset}. */
	public void copyFrom(long byteOffset, int[] src, int srcIndex, int length) {
		copyIn(byteOffset, src, src.length, srcIndex, length, ElementType.INT);
	}

	/** Copies {@code length} elements of {@code src} from {@code srcIndex} into this buffer at {@code byteOffset}. */
	public void copyFrom(long byteOffset, long[] src, int srcIndex, int length) {
		copyIn(byteOffset, src, src.length, srcIndex, length, ElementType.LONG);
	}

	/** Copies {@code length} elements of {@code src} from {@code srcIndex} into this buffer at {@code byteOffset}. */
	public void copyFrom(long byteOffset, float[] src, int srcIndex, int length) {
		copyIn(byteOffset, src, src.length, srcIndex, length, ElementType.FLOAT);
	}

	/** Copies {@code length} elements of {@code src} from {@code srcIndex} into this buffer at {@code byteOffset}. */
	public void copyFrom(long byteOffset, double[] src, int srcIndex, int length) {
		copyIn(byteOffset, src, src.length, srcIndex, length, ElementType.DOUBLE);
	}

	public void copyTo(byte[] dst) {
		copyTo(0, dst, 0, dst.length);
	}

	public void copyTo(int[] dst) {
		copyTo(0, dst, 0, dst.length);
	}

	public void copyTo(long[] dst) {
		copyTo(0, dst, 0, dst.length);
	}

	public void copyTo(float[] dst) {
		copyTo(0, dst, 0, dst.length);
	}

	public void copyTo(double[] dst) {
		copyTo(0, dst, 0, dst.length);
	}

	/** Copies {@code length} elements from this buffer at {@code byteOffset} into {@code dst} from {@code dstIndex}. */
	public void copyTo(long byteOffset, byte[] dst, int dstIndex, int length) {
		copyOut(byteOffset, dst, dst.length, dstIndex, length, ElementType.BYTE);
	}

	/** Copies {@code length} elements from this buffer at {@code byteOffset} into {@code dst} from {@code dstIndex}. */
	public void copyTo(long byteOffset, int[] dst, int dstIndex, int length) {
		copyOut(byteOffset, dst, dst.length, dstIndex, length, ElementType.INT);
	}

	/** Copies {@code length} elements from this buffer at {@code byteOffset} into {@code dst} from {@code dstIndex}. */
	public void copyTo(long byteOffset, long[] dst, int dstIndex, int length) {
		copyOut(byteOffset, dst, dst.length, dstIndex, length, ElementType.LONG);
	}

	/** Copies {@code length} elements from this buffer at {@code byteOffset} into {@code dst} from {@code dstIndex}. */
	public void copyTo(long byteOffset, float[] dst, int dstIndex, int length) {
		copyOut(byteOffset, dst, dst.length, dstIndex, length, ElementType.FLOAT);
	}

	/** Copies {@code length} elements from this buffer at {@code byteOffset} into {@code dst} from {@code dstIndex}. */
	public void copyTo(long byteOffset, double[] dst, int dstIndex, int length) {
		copyOut(byteOffset, dst, dst.length, dstIndex, length, ElementType.DOUBLE);
	}

	/**
	 * Copies {@code length} elements of a primitive array of any supported type ({@code byte[]},
	 * {@code int[]}, {@code long[]}, {@code float[]}, {@code double[]}) into this buffer at {@code byteOffset}.
	 * @throws IllegalArgumentException if {@code array} is not such an array
	 */
	public void copyFromArray(long byteOffset, Object array, int index, int length) {
		copyIn(byteOffset, array, Array.getLength(array), index, length, elementTypeOf(array));
	}

	/**
	 * Copies {@code length} elements from this buffer at {@code byteOffset} into a primitive array of any
	 * supported type, from {@code index}.
	 * @throws IllegalArgumentException if {@code array} is not such an array
	 */
	public void copyToArray(long byteOffset, Object array, int index, int length) {
		copyOut(byteOffset, array, Array.getLength(array), index, length, elementTypeOf(array));
	}

	/** Sets every byte of the buffer to {@code value}. */
	public void fill(byte value) {
		fill(0, size(), value);
	}

	/** Sets {@code byteCount} bytes from {@code byteOffset} to {@code value}. */
	public void fill(long byteOffset, long byteCount, byte value) {
		checkRange(byteOffset, byteCount, () -> "fill of " + byteCount + " bytes");
		Allocation memory = beginUse();
		try {
			memory.fill(byteOffset, byteCount, value);
		}
		finally {
			endUse();
			Reference.reachabilityFence(this);
		}
	}

	/**
	 * Sets {@code count} 32-bit words from {@code byteOffset} to {@code value}, as {@code cuMemsetD32}:
	 * the way to fill int or float elements with one value ({@link Float#floatToRawIntBits}).
	 * @throws IllegalArgumentException if {@code byteOffset} is not a multiple of 4
	 */
	public void fillInts(long byteOffset, long count, int value) {
		if ((byteOffset & 3) != 0) {
			throw new IllegalArgumentException("32-bit fill must start at a multiple of 4 bytes: " + byteOffset);
		}
		checkRange(byteOffset, (count < 0 || count > Long.MAX_VALUE / Integer.BYTES) ? -1 : count * Integer.BYTES,
				() -> "fill of " + count + " 32-bit words");
		Allocation memory = beginUse();
		try {
			memory.fillInts(byteOffset, count, value);
		}
		finally {
			endUse();
			Reference.reachabilityFence(this);
		}
	}

	/**
	 * Checks that {@code byteCount} bytes from {@code byteOffset} lie within this buffer.
	 * @throws IndexOutOfBoundsException if they do not
	 */
	public void checkRange(long byteOffset, long byteCount) {
		checkRange(byteOffset, byteCount, () -> "range of " + byteCount + " bytes");
	}

	/**
	 * The memory behind another buffer, for buffers that lend a buffer of their own (scopes, caches).
	 * @throws IllegalStateException if that buffer is closed
	 */
	protected static Allocation allocationOf(GpuBuffer buffer) {
		return buffer.allocation();
	}

	/** Begins a use of another buffer's memory ({@link #beginUse()}), for buffers that lend a buffer of their own. */
	protected static Allocation beginUseOf(GpuBuffer buffer) {
		return buffer.beginUse();
	}

	/** Ends a use of another buffer's memory that {@link #beginUseOf} began. */
	protected static void endUseOf(GpuBuffer buffer) {
		buffer.endUse();
	}

	/**
	 * The element type of a primitive array.
	 * @throws IllegalArgumentException if {@code array} is not an array of a supported primitive type
	 */
	public static ElementType elementTypeOf(Object array) {
		Class<?> component = (array != null) ? array.getClass().getComponentType() : null;
		if (component == null || !component.isPrimitive()) {
			throw new IllegalArgumentException("not a primitive array: " + array);
		}
		return ElementType.of(component);
	}

	private void copyIn(long byteOffset, Object array, int arrayLength, int index, int length, ElementType type) {
		checkCopy(byteOffset, arrayLength, index, length, type);
		Allocation memory = beginUse();
		try {
			memory.copyFromHost(byteOffset, array, index, length, type);
		}
		finally {
			endUse();
			Reference.reachabilityFence(this);
		}
	}

	private void copyOut(long byteOffset, Object array, int arrayLength, int index, int length, ElementType type) {
		checkCopy(byteOffset, arrayLength, index, length, type);
		Allocation memory = beginUse();
		try {
			memory.copyToHost(byteOffset, array, index, length, type);
		}
		finally {
			endUse();
			Reference.reachabilityFence(this);
		}
	}

	private void checkCopy(long byteOffset, int arrayLength, int index, int length, ElementType type) {
		Objects.checkFromIndexSize(index, length, arrayLength);
		checkRange(byteOffset, (long) length * type.bytes(),
				() -> "copy of " + length + " " + type + " elements (" + (long) length * type.bytes() + " bytes)");
	}

	private void checkRange(long byteOffset, long byteCount, Supplier<String> what) {
		if (byteOffset < 0 || byteCount < 0 || byteCount > size() - byteOffset) {
			throw new IndexOutOfBoundsException(what.get() + " at byte offset " + byteOffset
					+ " must lie within the buffer's " + size() + " bytes");
		}
	}

}
