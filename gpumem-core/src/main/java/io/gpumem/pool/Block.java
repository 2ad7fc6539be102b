package io.gpumem.pool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.PhantomReference;
import java.lang.ref.ReferenceQueue;

import io.gpumem.memory.Allocation;
import io.gpumem.pool.diagnostics.PoolRecorder;

/**
 * A block a pool holds from its allocator, lent out in turn to the buffers that wrap it. Nothing on the
 * hit path writes into a block but the leak watcher of a watched lend, which at level {@code simple}
 * is every lend of a block of {@value LeakWatch#ALWAYS_WATCHED_BYTES} bytes or more: such blocks are
 * {@linkplain #of made} with 128 bytes of padding behind their fields, so that two threads lending
 * two of them never write one cache line. Smaller blocks, written on a sampled lend only, stay compact.
 */
class Block {

	static final VarHandle LEAK;

	static {
		try {
			LEAK = MethodHandles.lookup().findVarHandle(Block.class, "leak", Leak.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	final Allocation allocation;

	/** The size class, or -1 for a block allocated to the exact size of a request above the top class. */
	final int classIndex;

	final long size;

	/** The span of the arena's segment this block is, or null for a block of its own allocation. */
	final Span span;

	/**
	 * Watches the buffer currently lending this block, while leak detection is on: the block keeps it reachable for
	 * as long as it is lent, which is what lets the garbage collector enqueue it.
	 */
	Leak leak;

	Block(Allocation allocation, int classIndex, Span span) {
		this.allocation = allocation;
		this.classIndex = classIndex;
		this.size = allocation.size();
		this.span = span;
	}

	/** A block of an allocation or a span, padded where every lend of it is watched. */
	static Block of(Allocation allocation, int classIndex, Span span) {
		return (allocation.size() >= LeakWatch.ALWAYS_WATCHED_BYTES) ? new Padded(allocation, classIndex, span)
				: new Block(allocation, classIndex, span);
	}

	/** Stops watching the buffer that lent this block for leaks, as it is closed; writes only if it was watched. */
	void unwatch() {
		if (this.leak != null) {
			this.leak = null;
		}
	}

	/**
	 * Enqueued when the buffer lending a block becomes unreachable without having been closed. The
	 * block references it while lent, which keeps it reachable for the garbage collector to enqueue.
	 */
	static final class Leak extends PhantomReference<PooledBuffer> {

		final Block block;

		/** The stripe the block goes back to. */
		final int stripe;

		final long requestedBytes;

		/** Where the buffer was acquired; null unless leak detection is paranoid. */
		final Throwable site;

		/** The buffer's recorded lend, or null. */
		final PoolRecorder.Lend lend;

		Leak(PooledBuffer buffer, Block block, int stripe, ReferenceQueue<PooledBuffer> queue, Throwable site,
				PoolRecorder.Lend lend) {
			super(buffer, queue);
			this.block = block;
			this.stripe = stripe;
			this.requestedBytes = buffer.size();
			this.site = site;
			this.lend = lend;
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
