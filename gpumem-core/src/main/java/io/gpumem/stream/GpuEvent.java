package io.gpumem.stream;

import java.time.Duration;

/** A point in a {@link GpuStream}'s work: complete once everything enqueued before it has run. */
public interface GpuEvent extends AutoCloseable {

	/** Whether the work before this event has completed; never waits. */
	boolean isComplete();

	/**
	 * Waits until the work before this event has completed: a virtual thread parks, a platform thread waits in the
	 * driver ({@link GpuWaits}).
	 */
	void await();

	/**
	 * Waits at most {@code timeout} for the work before this event, parking between polls on any thread.
	 * @return whether it completed in time
	 * @throws java.util.concurrent.CancellationException if the thread is interrupted while it waits
	 */
	default boolean await(Duration timeout) {
		return GpuWaits.poll(this::isComplete, timeout.toNanos());
	}

	/** Releases the event; an incomplete event is waited for first. */
	@Override
	void close();

}
