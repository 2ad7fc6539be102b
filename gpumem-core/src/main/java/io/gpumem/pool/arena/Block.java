package io.gpumem.pool.arena;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.PhantomReference;

import io.gpumem.memory.Allocation;

/**
 * A block of memory a pool holds from its allocator: a span of one of the arena's segments, or an allocation of its
 * own, lent in turn to the buffers that wrap it. Nothing on the hit path writes into a block but the leak watch of a
 * watched lend, which at level {@code simple} is every lend of a block of {@value #WATCHED_BYTES} bytes or more:
 * such blocks are {@linkplain #of made} with 128 bytes of padding behind their fields, so that two threads lending
 * two of them never write one cache line. Smaller blocks, written on a sampled lend only, stay compact.
 */
public class Block {

	/** The class of a request above the top size class, whose block is cut or allocated to its size. */
	public static final int ABOVE_TOP_CLASS = -1;

	/** Blocks of this many bytes or more have every lend watched for leaks at level {@code simple}: padded. */
	public static final long WATCHED_BYTES = 64L << 10;

	/** {@link #watch}, for the one of a close and a reclaim that takes it to win. */
	public static final VarHandle WATCH;

	static {
		try {
			WATCH = MethodHandles.lookup().findVarHandle(Block.class, "watch", PhantomReference.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	public final Allocation allocation;

	/** The size class, or {@link #ABOVE_TOP_CLASS}. */
	public final int classIndex;

	public final long size;

	/** The span of the arena's segment this block is, or null for a block of its own allocation. */
	public final Span span;

	/**
	 * The reference watching the buffer lending this block for leaks, where one does: the block keeps it reachable
	 * while lent, which is what lets the garbage collector enqueue it.
	 */
	public PhantomReference<?> watch;

	Block(Allocation allocation, int classIndex, Span span) {
		this.allocation = allocation;
		this.classIndex = classIndex;
		this.size = allocation.size();
		this.span = span;
	}

	/** A block of an allocation or a span, padded where every lend of it is watched. */
	public static Block of(Allocation allocation, int classIndex, Span span) {
		return (allocation.size() >= WATCHED_BYTES) ? new Padded(allocation, classIndex, span)
				: new Block(allocation, classIndex, span);
	}

	/** Stops watching the buffer that lent this block for leaks, as it is closed; writes only if it was watched. */
	public void unwatch() {
		if (this.watch != null) {
			this.watch = null;
		}
	}

	/** A block whose fields are followed by 128 bytes of padding. */
	@SuppressWarnings("unused")
	static final class Padded extends Block {

		private long p01, p02, p03, p04, p05, p06, p07, p08, p09, p10, p11, p12, p13, p14, p15, p16;

		Padded(Allocation allocation, int classIndex, Span span) {
			super(allocation, classIndex, span);
		}

	}

}
