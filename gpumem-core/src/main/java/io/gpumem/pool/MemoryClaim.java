package io.gpumem.pool;

import java.util.concurrent.atomic.AtomicLong;

import io.gpumem.memory.ByteSizes;
import io.gpumem.stream.GpuStream;

/**
 * Memory of a pool set aside for one request before it touches the device ({@link MemoryPool#claim}): the request
 * acquires its buffers from the claim, up to its bytes at a time, so that it never holds part of its memory while
 * waiting for the rest. Closing the claim gives its bytes back to the pool's admission; buffers still lent from it
 * then count as any other lent buffer until they are closed.
 */
public final class MemoryClaim implements AutoCloseable {

	/** What {@link #lent} holds once the claim is closed. */
	private static final long CLOSED = -1;

	private final StratifiedMemoryPool pool;

	private final Claims claims;

	private final long bytes;

	private final long admittedAt;

	/** Bytes of the blocks lent from the claim and not yet closed, or {@link #CLOSED}. */
	private final AtomicLong lent = new AtomicLong();

	MemoryClaim(StratifiedMemoryPool pool, Claims claims, long bytes, long admittedAt) {
		this.pool = pool;
		this.claims = claims;
		this.bytes = bytes;
		this.admittedAt = admittedAt;
	}

	/** The bytes claimed. */
	public long bytes() {
		return this.bytes;
	}

	/** The bytes not lent from the claim now: what its next acquires may take; 0 once closed. */
	public long remainingBytes() {
		long now = this.lent.get();
		return (now == CLOSED) ? 0 : this.bytes - now;
	}

	/** Whether the claim was closed. */
	public boolean isClosed() {
		return this.lent.get() == CLOSED;
	}

	/**
	 * Lends a buffer of {@code bytes} bytes from the claim: its block ({@link StratifiedMemoryPool#blockSize}) counts
	 * against the claim until the buffer is closed.
	 * @throws IllegalStateException if the claim is closed, or the block does not fit in what is left of it
	 * @throws io.gpumem.memory.GpuOutOfMemoryException as {@link MemoryPool#acquire(long)} where memory the claim
	 * was admitted for is held outside the pool's reach (another pool or process)
	 */
	public PooledBuffer acquire(long bytes) {
		long block = this.pool.blockSize(bytes);
		for (;;) {
			long now = this.lent.get();
			if (now == CLOSED) {
				throw new IllegalStateException("claim of " + ByteSizes.format(this.bytes) + " on pool '"
						+ this.pool.name() + "' is closed");
			}
			if (now + block > this.bytes) {
				throw new IllegalStateException("a buffer of " + bytes + " bytes (a block of " + block
						+ ") does not fit in the claim of " + this.bytes + " bytes on pool '" + this.pool.name() + "', "
						+ now + " of which are lent; claim the sum of the blocks a request acquires at once");
			}
			if (this.lent.compareAndSet(now, now + block)) {
				break;
			}
		}
		this.claims.lent(block);
		PooledBuffer buffer;
		try {
			buffer = this.pool.acquire(bytes);
		}
		catch (RuntimeException ex) {
			returned(block);
			throw ex;
		}
		buffer.claim(this);
		return buffer;
	}

	/** Gives the claim's bytes back to the pool's admission; a second close does nothing. */
	@Override
	public void close() {
		long held = this.lent.getAndSet(CLOSED);
		if (held != CLOSED) {
			this.claims.release(this, held, System.nanoTime() - this.admittedAt);
		}
	}

	/**
	 * Closes the claim once the work enqueued so far on {@code stream} has completed, so that no other request is
	 * admitted for memory the stream may still use; at once where that work is done (as on the host backend).
	 */
	public void closeAfter(GpuStream stream) {
		if (!isClosed()) {
			this.claims.closeAfter(this, PooledBuffer.eventAfter(stream, this::close));
		}
	}

	/** A buffer lent from the claim, of a block of {@code block} bytes, was closed. */
	void returned(long block) {
		for (;;) {
			long now = this.lent.get();
			if (now == CLOSED) {
				return;
			}
			if (this.lent.compareAndSet(now, now - block)) {
				this.claims.returned(block);
				return;
			}
		}
	}

	@Override
	public String toString() {
		return "MemoryClaim[" + this.pool.name() + ", " + ByteSizes.format(this.bytes)
				+ (isClosed() ? ", closed" : ", " + ByteSizes.format(remainingBytes()) + " left") + "]";
	}

}
