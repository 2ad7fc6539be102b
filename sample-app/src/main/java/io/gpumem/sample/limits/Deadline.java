package io.gpumem.sample.limits;

import java.time.Duration;

/**
 * When a request's work must stop: at its timeout, or at once when it is cancelled (its client went
 * away). Work calls {@link #check()} between its steps; the thread that notices cancels.
 */
public final class Deadline {

	private final Duration timeout;

	private final long endNanos;

	private volatile String cancelled;

	private Deadline(Duration timeout) {
		this.timeout = timeout;
		this.endNanos = System.nanoTime() + timeout.toNanos();
	}

	/** A deadline {@code timeout} from now. */
	public static Deadline after(Duration timeout) {
		return new Deadline(timeout);
	}

	/** Stops the work at its next {@link #check()} as if its time were up. */
	public void expire() {
		cancel(timedOut());
	}

	/** Stops the work at its next {@link #check()}, saying {@code why}; the first reason given stays. */
	public void cancel(String why) {
		if (this.cancelled == null) {
			this.cancelled = why;
		}
	}

	/** Whether the work should stop. */
	public boolean isOver() {
		return this.cancelled != null || System.nanoTime() - this.endNanos >= 0;
	}

	/** The time left, zero when over. */
	public Duration remaining() {
		return (this.cancelled != null) ? Duration.ZERO : Duration.ofNanos(Math.max(0, this.endNanos - System.nanoTime()));
	}

	/**
	 * Returns if the work may go on.
	 * @throws DeadlineExceededException if it was cancelled or its time is up
	 */
	public void check() {
		if (isOver()) {
			throw exceeded();
		}
	}

	/** What {@link #check()} throws once the work is over. */
	public DeadlineExceededException exceeded() {
		String why = this.cancelled;
		return new DeadlineExceededException((why != null) ? why : timedOut());
	}

	private String timedOut() {
		return "the request ran past its deadline of " + this.timeout.toMillis() + " ms (sample.request-timeout)";
	}

}
