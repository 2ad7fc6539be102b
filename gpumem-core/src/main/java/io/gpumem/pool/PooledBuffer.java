package io.gpumem.pool;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.ref.Reference;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryKind;
import io.gpumem.stream.GpuEvent;
import io.gpumem.stream.GpuStream;

/** A buffer lent by a {@link StratifiedMemoryPool}; closing it gives its block back to the pool. */
public final class PooledBuffer extends GpuBuffer {

	private static final VarHandle BLOCK;

	static {
		try {
			BLOCK = MethodHandles.lookup().findVarHandle(PooledBuffer.class, "block", Block.class);
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	private final StratifiedMemoryPool pool;

	private final long size;

	private final MemoryKind kind;

	/** The lent block; null once closed. Written plainly: a buffer passes between threads only with a happens-before edge. */
	private Block block;

	PooledBuffer(StratifiedMemoryPool pool, Block block, long size) {
		this.pool = pool;
		this.size = size;
		this.kind = block.allocation.kind();
		this.block = block;
	}

	@Override
	public long size() {
		return this.size;
	}

	@Override
	public MemoryKind kind() {
		return this.kind;
	}

	/** Size of the block behind this buffer: its size class, or its size if above the top class. */
	public long capacity() {
		return currentBlock().size;
	}

	/** The pool this buffer came from. */
	public StratifiedMemoryPool pool() {
		return this.pool;
	}

	@Override
	public boolean isClosed() {
		return this.block == null;
	}

	@Override
	public void close() {
		Block released = (Block) BLOCK.getAndSet(this, null);
		if (released != null) {
			released.leak = null;
			this.pool.release(released);
		}
		Reference.reachabilityFence(this);
	}

	/**
	 * Returns the memory to the pool once the work enqueued so far on {@code stream} has completed, so
	 * that no other work is lent memory the stream may still read or write. On the host backend, whose
	 * streams run work at once, this is {@link #close()}. A closed buffer is left as it is.
	 */
	public void closeAfter(GpuStream stream) {
		if (this.block == null) {
			return;
		}
		GpuEvent event = stream.record();
		Block released = (Block) BLOCK.getAndSet(this, null);
		if (released != null) {
			released.leak = null;
			this.pool.releaseAfter(released, event);
		}
		else {
			event.close();
		}
		Reference.reachabilityFence(this);
	}

	@Override
	protected Allocation allocation() {
		return currentBlock().allocation;
	}

	private Block currentBlock() {
		Block current = this.block;
		if (current == null) {
			throw new IllegalStateException("buffer of " + this.size + " bytes from pool '" + this.pool.name()
					+ "' used after close");
		}
		return current;
	}

	@Override
	public String toString() {
		return "PooledBuffer[" + this.pool.name() + ", " + this.size + " bytes" + (isClosed() ? ", closed" : "") + "]";
	}

}
