package io.gpumem.reduction;

import io.gpumem.memory.ElementType;

/** A reduction whose partial results live in a reduction buffer, each slot starting at the op's identity. */
public enum ReductionOp {

	SUM,

	PRODUCT,

	MIN,

	MAX;

	/**
	 * The identity of this op for an element type, as the element's raw bits: 32 significant bits for
	 * INT and FLOAT, 64 for LONG and DOUBLE.
	 * @throws IllegalArgumentException for BYTE, which reductions do not support
	 */
	public long identityBits(ElementType type) {
		return switch (type) {
			case INT -> switch (this) {
				case SUM -> 0;
				case PRODUCT -> 1;
				case MIN -> Integer.MAX_VALUE;
				case MAX -> Integer.MIN_VALUE & 0xFFFF_FFFFL;
			};
			case LONG -> switch (this) {
				case SUM -> 0;
				case PRODUCT -> 1;
				case MIN -> Long.MAX_VALUE;
				case MAX -> Long.MIN_VALUE;
			};
			case FLOAT -> Float.floatToRawIntBits(switch (this) {
				case SUM -> 0f;
				case PRODUCT -> 1f;
				case MIN -> Float.POSITIVE_INFINITY;
				case MAX -> Float.NEGATIVE_INFINITY;
			}) & 0xFFFF_FFFFL;
			case DOUBLE -> Double.doubleToRawLongBits(switch (this) {
				case SUM -> 0d;
				case PRODUCT -> 1d;
				case MIN -> Double.POSITIVE_INFINITY;
				case MAX -> Double.NEGATIVE_INFINITY;
			});
			case BYTE -> throw new IllegalArgumentException("reductions support int, long, float and double, not byte");
		};
	}

	/** Combines two floating-point values, as a kernel does on FLOAT and DOUBLE slots. */
	public double combine(double a, double b) {
		return switch (this) {
			case SUM -> a + b;
			case PRODUCT -> a * b;
			case MIN -> Math.min(a, b);
			case MAX -> Math.max(a, b);
		};
	}

	/** Combines two integer values, as a kernel does on INT and LONG slots. */
	public long combine(long a, long b) {
		return switch (this) {
			case SUM -> a + b;
			case PRODUCT -> a * b;
			case MIN -> Math.min(a, b);
			case MAX -> Math.max(a, b);
		};
	}

}
