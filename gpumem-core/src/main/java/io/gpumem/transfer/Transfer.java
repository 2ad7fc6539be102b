package io.gpumem.transfer;

import java.util.concurrent.locks.ReentrantLock;

import io.gpumem.observation.MemoryObserver;
import io.gpumem.stream.GpuEvent;

/**
 * An asynchronous transfer in flight: complete once its stream has run its copies; for a download, the
 * arrays are filled by {@link #await()}.
 */
public final class Transfer implements AutoCloseable {

	private final ReentrantLock awaiting = new ReentrantLock();

	private final GpuEvent event;

	private final int copies;

	private final Runnable whenComplete;

	private MemoryObserver.Span span;

	private boolean done;

	Transfer(GpuEvent event, int copies, Runnable whenComplete, MemoryObserver.Span span) {
		this.event = event;
		this.copies = copies;
		this.whenComplete = whenComplete;
		this.span = span;
	}

	/** How many copies were enqueued: fewer than the parts when adjacent parts were merged. */
	public int copies() {
		return this.copies;
	}

	/** Whether the stream has run the copies; never waits. For a download, the arrays are filled by {@link #await()}. */
	public boolean isComplete() {
		return this.event.isComplete();
	}

	/**
	 * Waits for the copies and, for a download, fills the arrays; a second call does nothing. A lock, not a monitor,
	 * orders two callers, so that a virtual thread parks in the wait on any Java version.
	 */
	public void await() {
		this.awaiting.lock();
		try {
			awaitLocked();
		}
		finally {
			this.awaiting.unlock();
		}
	}

	private void awaitLocked() {
		if (!this.done) {
			Throwable failure = null;
			try {
				this.event.await();
				this.done = true;
				try {
					this.whenComplete.run();
				}
				finally {
					this.event.close();
				}
			}
			catch (RuntimeException | Error ex) {
				failure = ex;
				throw ex;
			}
			finally {
				if (this.span != null) {
					this.span.end(failure);
					this.span = null;
				}
			}
		}
	}

	/** {@link #await()}: a transfer's staging memory goes back to its pool only once its copies are done. */
	@Override
	public void close() {
		await();
	}

}
