package io.gpumem.pool;

import java.util.Iterator;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import io.gpumem.stream.GpuEvent;

/**
 * Blocks closed after stream work ({@link PooledBuffer#closeAfter}) that stay lent until the event
 * recorded behind that work has completed, so that no other work is lent memory a stream may still
 * read or write.
 */
final class PendingReleases {

	private final Queue<Pending> pending = new ConcurrentLinkedQueue<>();

	void add(Block block, int stripe, GpuEvent event) {
		this.pending.add(new Pending(block, stripe, event));
	}

	/**
	 * Hands the blocks whose event has completed to {@code release}, in the order they were closed.
	 * @return how many were released
	 */
	int drain(Release release) {
		int released = 0;
		for (Iterator<Pending> it = this.pending.iterator(); it.hasNext();) {
			Pending next = it.next();
			if (next.event.isComplete() && this.pending.remove(next)) {
				next.event.close();
				release.release(next.block, next.stripe);
				released++;
			}
		}
		return released;
	}

	/** Hands every block to {@code release}, complete or not, as a closing pool does. */
	void drainAll(Release release) {
		for (Pending next; (next = this.pending.poll()) != null;) {
			next.event.close();
			release.release(next.block, next.stripe);
		}
	}

	private record Pending(Block block, int stripe, GpuEvent event) {
	}

}
