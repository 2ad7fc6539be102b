package io.gpumem.memory;

/** The primitive element types that buffers copy to and from Java arrays. */
public enum ElementType {

	BYTE(byte[].class, Byte.BYTES),

	INT(int[].class, Integer.BYTES),

	LONG(long[].class, Long.BYTES),

	FLOAT(float[].class, Float.BYTES),

	DOUBLE(double[].class, Double.BYTES);

	private final Class<?> arrayType;

	private final int bytes;

	ElementType(Class<?> arrayType, int bytes) {
		this.arrayType = arrayType;
		this.bytes = bytes;
	}

	/** Size of one element in bytes. */
	public int bytes() {
		return this.bytes;
	}

	/**
	 * Bytes taken by {@code count} elements.
	 * @throws IllegalArgumentException if the count is negative or the byte size overflows a long
	 */
	public long byteSize(long count) {
		if (count < 0) {
			throw new IllegalArgumentException("element count must not be negative: " + count);
		}
		try {
			return Math.multiplyExact(count, this.bytes);
		}
		catch (ArithmeticException ex) {
			throw new IllegalArgumentException(
					count + " elements of " + this + " overflow a 64-bit byte size", ex);
		}
	}

	/** The element type of a primitive Java type such as {@code float.class}. */
	public static ElementType of(Class<?> primitiveType) {
		for (ElementType type : values()) {
			if (type.arrayType.getComponentType() == primitiveType) {
				return type;
			}
		}
		throw new IllegalArgumentException("unsupported element type " + primitiveType
				+ ": must be one of byte, int, long, float, double");
	}

}
