package io.gpumem.memory;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The copies and fills of an {@link Allocation} whose memory the JVM can address as a direct
 * {@link ByteBuffer}: host-backend blocks and pinned host memory.
 */
public final class ByteBufferAccess {

	private ByteBufferAccess() {
	}

	/** Copies {@code count} elements of a primitive array into {@code buffer} at {@code byteOffset}. */
	public static void copyIn(ByteBuffer buffer, long byteOffset, Object array, int index, int count,
			ElementType type) {
		int offset = Math.toIntExact(byteOffset);
		switch (type) {
			case BYTE -> buffer.put(offset, (byte[]) array, index, count);
			case INT -> view(buffer, offset, count, type).asIntBuffer().put((int[]) array, index, count);
			case LONG -> view(buffer, offset, count, type).asLongBuffer().put((long[]) array, index, count);
			case FLOAT -> view(buffer, offset, count, type).asFloatBuffer().put((float[]) array, index, count);
			case DOUBLE -> view(buffer, offset, count, type).asDoubleBuffer().put((double[]) array, index, count);
		}
	}

	/** Copies {@code count} elements from {@code buffer} at {@code byteOffset} into a primitive array. */
	public static void copyOut(ByteBuffer buffer, long byteOffset, Object array, int index, int count,
			ElementType type) {
		int offset = Math.toIntExact(byteOffset);
		switch (type) {
			case BYTE -> buffer.get(offset, (byte[]) array, index, count);
			case INT -> view(buffer, offset, count, type).asIntBuffer().get((int[]) array, index, count);
			case LONG -> view(buffer, offset, count, type).asLongBuffer().get((long[]) array, index, count);
			case FLOAT -> view(buffer, offset, count, type).asFloatBuffer().get((float[]) array, index, count);
			case DOUBLE -> view(buffer, offset, count, type).asDoubleBuffer().get((double[]) array, index, count);
		}
	}

	/** Sets {@code byteCount} bytes from {@code byteOffset} to {@code value}. */
	public static void fill(ByteBuffer buffer, long byteOffset, long byteCount, byte value) {
		int offset = Math.toIntExact(byteOffset);
		int end = Math.addExact(offset, Math.toIntExact(byteCount));
		int longEnd = offset + ((end - offset) & ~7);
		long pattern = (value & 0xFFL) * 0x0101010101010101L;
		for (int i = offset; i < longEnd; i += Long.BYTES) {
			buffer.putLong(i, pattern);
		}
		for (int i = longEnd; i < end; i++) {
			buffer.put(i, value);
		}
	}

	/** Sets {@code count} 32-bit words from {@code byteOffset} to {@code value}. */
	public static void fillInts(ByteBuffer buffer, long byteOffset, long count, int value) {
		int offset = Math.toIntExact(byteOffset);
		int end = Math.addExact(offset, Math.toIntExact(Math.multiplyExact(count, Integer.BYTES)));
		ByteBuffer ordered = buffer.duplicate().order(ByteOrder.nativeOrder());
		for (int i = offset; i < end; i += Integer.BYTES) {
			ordered.putInt(i, value);
		}
	}

	private static ByteBuffer view(ByteBuffer buffer, int byteOffset, int count, ElementType type) {
		return buffer.slice(byteOffset, count * type.bytes()).order(ByteOrder.nativeOrder());
	}

}
