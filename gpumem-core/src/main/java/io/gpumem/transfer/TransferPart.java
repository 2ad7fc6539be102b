package io.gpumem.transfer;

import java.lang.reflect.Array;
import java.util.Objects;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.memory.ElementType;

/**
 * One array and where its elements go to or come from on the device: a part of a batched transfer.
 *
 * @param array a primitive array: {@code byte[]}, {@code int[]}, {@code long[]}, {@code float[]} or {@code double[]}
 * @param buffer the device buffer
 * @param byteOffset where in the buffer the elements start
 */
public record TransferPart(Object array, GpuBuffer buffer, long byteOffset) {

	public TransferPart {
		Objects.requireNonNull(array, "array");
		Objects.requireNonNull(buffer, "buffer");
		GpuBuffer.elementTypeOf(array);
	}

	/** A part at the start of the buffer. */
	public static TransferPart of(Object array, GpuBuffer buffer) {
		return new TransferPart(array, buffer, 0);
	}

	ElementType type() {
		return GpuBuffer.elementTypeOf(this.array);
	}

	int length() {
		return Array.getLength(this.array);
	}

	long bytes() {
		return (long) length() * type().bytes();
	}

}
