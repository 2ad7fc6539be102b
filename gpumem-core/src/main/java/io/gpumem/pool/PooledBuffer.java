package io.gpumem.pool;

import java.lang.ref.Reference;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.GpuDeviceFailedException;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.arena.Block;
import io.gpumem.pool.diagnostics.PoolRecorder;
import io.gpumem.pool.recovery.Holdings;
import io.gpumem.stream.GpuEvent;
import io.gpumem.stream.GpuStream;

/** A buffer lent by a {@link StratifiedMemoryPool}; closing it gives its block back to the pool. */
public final class PooledBuffer extends GpuBuffer {

	private final StratifiedMemoryPool pool;

	private final long size;

	private final MemoryKind kind;

	/** The stripe of the pool's free lists the block goes back to. */
	private final int stripe;

	/** The buffer's recorded lend, or null. */
	private final PoolRecorder.Lend lend;

	/** The thread whose holdings count the block, or null: for buffers above the free lists' classes. */
	private final Holdings.Holder holder;

	/** The account the buffer was lent on besides the pool's, or null. */
	private final LendAccount account;

	/** The lent block; null once closed. Written plainly: a buffer passes between threads only with a happens-before edge. */
	private Block block;

	PooledBuffer(StratifiedMemoryPool pool, Block block, long size, int stripe, PoolRecorder.Lend lend,
			Holdings.Holder holder, LendAccount account) {
		this.pool = pool;
		this.lend = lend;
		this.holder = holder;
		this.account = account;
		this.size = size;
		this.kind = block.allocation.kind();
		this.stripe = stripe;
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

	/**
	 * Size of the block behind this buffer: its size class up to 64 KiB, the request's size rounded up to
	 * 256 bytes above that, and above the top class the block it was given (the request's size when
	 * allocated for it, up to 20 MiB more when a cached block was reused).
	 */
	public long capacity() {
		return currentBlock().size;
	}

	/** The pool this buffer came from. */
	public MemoryPool pool() {
		return this.pool;
	}

	@Override
	public boolean isClosed() {
		return this.block == null;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Like every other use, close from one thread at a time: two threads closing the same buffer at once
	 * is a data race.
	 */
	@Override
	public void close() {
		Block released = this.block;
		if (released != null) {
			this.block = null;
			released.unwatch();
			this.pool.endLend(released, this.stripe, this.size, this.lend, this.holder, this.account);
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
		GpuEvent event = eventAfter(stream, this::close);
		Block released = this.block;
		this.block = null;
		released.unwatch();
		this.pool.endLendAfter(released, this.stripe, this.size, this.lend, this.holder, this.account, stream, event);
		Reference.reachabilityFence(this);
	}

	/**
	 * An event after the work enqueued so far on {@code stream}; where its device failed for good, {@code close} runs
	 * at once, as nothing will complete, and the failure is thrown.
	 */
	static GpuEvent eventAfter(GpuStream stream, Runnable close) {
		try {
			return stream.record();
		}
		catch (GpuDeviceFailedException failed) {
			close.run();
			throw failed;
		}
	}

	/** The stripe of the pool's free lists the block goes back to. */
	int stripe() {
		return this.stripe;
	}

	/**
	 * Takes the block out of this buffer, which is then closed, for {@code owner} to keep it elsewhere than a
	 * close would: null when the buffer is closed already.
	 * @throws IllegalArgumentException if the buffer is another pool's
	 */
	Block detach(StratifiedMemoryPool owner) {
		if (this.pool != owner) {
			throw new IllegalArgumentException(this + " is not a buffer of pool '" + owner.name() + "'");
		}
		Block detached = this.block;
		if (detached != null) {
			this.block = null;
			detached.unwatch();
			owner.endLendKept(detached, this.size, this.lend, this.holder, this.account);
		}
		Reference.reachabilityFence(this);
		return detached;
	}

	/** {@inheritDoc} Where the pool sleeps, wakes it first, or refuses ({@link SleepOnAcquire}). */
	@Override
	protected Allocation allocation() {
		Block current = currentBlock();
		this.pool.beforeUse();
		return current.allocation;
	}

	/** {@inheritDoc} Where the pool sleeps, wakes it first, or refuses; a sleep waits for the use to end. */
	@Override
	protected Allocation beginUse() {
		Block current = currentBlock();
		this.pool.beginUse();
		return current.allocation;
	}

	@Override
	protected void endUse() {
		this.pool.endUse();
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
