package io.gpumem.pool.arena;

/**
 * The blocks one tier (the arena, or the blocks above the top class) holds for each class, lent or kept: per slot
 * their count, their bytes and the most counted at once, side by side, and the bytes of all. Only the holder of its
 * owner's lock writes them, and the array is padded at both ends, so that no other writes share its cache lines; the
 * pool sums the owners' counts.
 */
public final class ReservedBlocks {

	/** Padding, in array elements, at both ends of what one lock's holder writes. */
	public static final int PAD = 16;

	/** Longs a slot takes: its blocks, their bytes, the most blocks at once. */
	private static final int STRIDE = 3;

	private final int classes;

	private final long[] counts;

	/** Where the bytes of all are counted: after the slots. */
	private final int all;

	public ReservedBlocks(int classes) {
		this.classes = classes;
		this.all = PAD + STRIDE * (classes + 1);
		this.counts = new long[this.all + 1 + PAD];
	}

	/**
	 * Books a block of {@code bytes} of a class (or {@link Block#ABOVE_TOP_CLASS}), or one given back for a count of -1.
	 * @return whether the class's blocks here are more than ever before
	 */
	public boolean add(int classIndex, int buffers, long bytes) {
		int index = index(slot(classIndex, this.classes));
		long count = this.counts[index] += buffers;
		this.counts[index + 1] += buffers * bytes;
		this.counts[this.all] += buffers * bytes;
		if (count <= this.counts[index + 2]) {
			return false;
		}
		this.counts[index + 2] = count;
		return true;
	}

	/** Bytes of every block booked here. */
	public long bytes() {
		return this.counts[this.all];
	}

	/** Blocks booked here in a slot ({@link #slot}). */
	public long buffers(int slot) {
		return this.counts[index(slot)];
	}

	/** Bytes of the blocks booked here in a slot. */
	public long bytes(int slot) {
		return this.counts[index(slot) + 1];
	}

	private static int index(int slot) {
		return PAD + STRIDE * slot;
	}

	/** The slot of a class of a ladder of {@code classes}: its index, or the last for {@link Block#ABOVE_TOP_CLASS}. */
	public static int slot(int classIndex, int classes) {
		return (classIndex == Block.ABOVE_TOP_CLASS) ? classes : classIndex;
	}

}
