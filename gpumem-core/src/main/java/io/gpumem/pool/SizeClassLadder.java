package io.gpumem.pool;

import java.util.Arrays;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

import io.gpumem.config.InvalidSettingException;
import io.gpumem.memory.ByteSizes;
import io.gpumem.pool.arena.Block;

/**
 * The ascending buffer sizes a pool rounds requests up to. A request goes to the smallest class that
 * holds it; requests above the largest class are not classed.
 * <p>
 * The {@linkplain #defaultLadder() default ladder} has four classes per power of two, aligned to
 * 128 bytes, from 256 B to 64 MiB. On a log-uniform stream of requests from 256 B to 1 MiB it reserves
 * 1.089 bytes per byte requested, against 1.386 for plain powers of two and 1.846 for the seed's 4×-spaced
 * buckets (see {@code docs/size-classes.md} and {@code SizeClassWaste} in gpumem-benchmarks).
 */
public final class SizeClassLadder {

	private static final SizeClassLadder DEFAULT = geometric(256, 64L << 20, 4, 128);

	private final long[] sizes;

	/** Bits of a request below its leading one that pick its sub-range: 16 sub-ranges per power of two. */
	private static final int SUB_BITS = 4;

	/**
	 * For each sub-range of request sizes ({@link #keyOf}), the first class at least as large as the
	 * smallest request in it: a lookup lands on the request's class or at most a step or two below it.
	 */
	private final int[] firstClassByKey = new int[keyOf(Long.MAX_VALUE) + 1];

	private SizeClassLadder(long[] sizes) {
		if (sizes.length == 0) {
			throw new InvalidSettingException("size-classes", "[]", "needs at least one class");
		}
		for (int i = 0; i < sizes.length; i++) {
			if (sizes[i] <= 0) {
				throw new InvalidSettingException("size-classes", Arrays.toString(sizes),
						"must all be positive (class " + i + " is " + sizes[i] + ")");
			}
			if (i > 0 && sizes[i] <= sizes[i - 1]) {
				throw new InvalidSettingException("size-classes", Arrays.toString(sizes),
						"must be strictly ascending (" + sizes[i - 1] + " is followed by " + sizes[i] + ")");
			}
		}
		this.sizes = sizes;
		for (int key = 0; key < this.firstClassByKey.length; key++) {
			int index = Arrays.binarySearch(sizes, smallestOf(key) + 1);
			this.firstClassByKey[key] = (index >= 0) ? index : -index - 1;
		}
	}

	/** A ladder of the given sizes, which must be positive and strictly ascending. */
	public static SizeClassLadder of(long... sizes) {
		return new SizeClassLadder(sizes.clone());
	}

	/**
	 * A ladder with {@code stepsPerDoubling} classes per power of two from {@code smallest} to
	 * {@code largest}, each rounded up to a multiple of {@code alignment}.
	 */
	public static SizeClassLadder geometric(long smallest, long largest, int stepsPerDoubling, long alignment) {
		if (smallest <= 0 || largest < smallest || stepsPerDoubling <= 0 || alignment <= 0) {
			throw new IllegalArgumentException("geometric ladder needs 0 < smallest <= largest, positive steps and"
					+ " alignment: smallest=" + smallest + ", largest=" + largest + ", steps=" + stepsPerDoubling
					+ ", alignment=" + alignment);
		}
		LongStream.Builder sizes = LongStream.builder();
		for (long octave = Long.highestOneBit(smallest); octave > 0 && octave <= largest; octave <<= 1) {
			for (int step = 0; step < stepsPerDoubling; step++) {
				long size = octave + octave * step / stepsPerDoubling;
				sizes.add(Math.floorDiv(size + alignment - 1, alignment) * alignment);
			}
		}
		return new SizeClassLadder(sizes.build().filter(size -> size >= smallest && size <= largest).distinct()
			.sorted().toArray());
	}

	/** Four classes per power of two, 128-byte aligned, 256 B to 64 MiB: 71 classes. */
	public static SizeClassLadder defaultLadder() {
		return DEFAULT;
	}

	/** Number of classes. */
	public int count() {
		return this.sizes.length;
	}

	/** Size of class {@code index}. */
	public long size(int index) {
		return this.sizes[index];
	}

	/** The largest class. */
	public long largest() {
		return this.sizes[this.sizes.length - 1];
	}

	/** The class sizes, smallest first. */
	public long[] sizes() {
		return this.sizes.clone();
	}

	/**
	 * Index of the smallest class holding {@code bytes} (positive), or {@link Block#ABOVE_TOP_CLASS} (-1) above the
	 * largest.
	 */
	public int indexOf(long bytes) {
		int index = this.firstClassByKey[keyOf(bytes - 1)];
		while (index < this.sizes.length && this.sizes[index] < bytes) {
			index++;
		}
		return (index < this.sizes.length) ? index : Block.ABOVE_TOP_CLASS;
	}

	/**
	 * The sub-range of {@code value} (a request size less one, at least 0): its position of the leading
	 * one and the {@value #SUB_BITS} bits below it, ascending with the value.
	 */
	private static int keyOf(long value) {
		if (value < (1 << SUB_BITS)) {
			return (int) value;
		}
		int top = 63 - Long.numberOfLeadingZeros(value);
		return ((top - SUB_BITS + 1) << SUB_BITS) | (int) ((value >>> (top - SUB_BITS)) & ((1 << SUB_BITS) - 1));
	}

	/** The smallest value of a sub-range of {@link #keyOf}. */
	private static long smallestOf(int key) {
		if (key < (1 << SUB_BITS)) {
			return key;
		}
		int top = (key >>> SUB_BITS) + SUB_BITS - 1;
		return (1L << top) | ((long) (key & ((1 << SUB_BITS) - 1)) << (top - SUB_BITS));
	}

	/**
	 * Refuses a setting of pool {@code pool} that names {@code size} bytes as a class, with {@code count}, where
	 * this ladder has no such class.
	 */
	void requireClass(String setting, long size, int count, String pool) {
		if (exactIndexOf(size) < 0) {
			throw new InvalidSettingException(setting + "[" + ByteSizes.exact(size) + "]", count,
					"names " + size + " bytes, which is not a size class of pool '" + pool + "': classes are " + this);
		}
	}

	/** Index of the class of exactly {@code size} bytes, or -1 if there is none. */
	public int exactIndexOf(long size) {
		int index = Arrays.binarySearch(this.sizes, size);
		return (index >= 0) ? index : -1;
	}

	/**
	 * Bytes reserved per byte requested for a stream of request sizes: the sum of the classes the
	 * requests round up to over the sum of the requests. Requests above the largest class count at
	 * their own size, as a pool allocates them exactly.
	 */
	public double reservedOverRequested(long[] requests) {
		double requested = 0;
		double reserved = 0;
		for (long request : requests) {
			int index = indexOf(request);
			requested += request;
			reserved += (index >= 0) ? this.sizes[index] : request;
		}
		return reserved / requested;
	}

	@Override
	public String toString() {
		return Arrays.stream(this.sizes).mapToObj(ByteSizes::format).collect(Collectors.joining(", ", "[", "]"));
	}

}
