package io.gpumem.sample.limits;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

/**
 * When a request's work must stop: at its timeout, or at once when it is cancelled (its client went
 * away). Work calls {@link #check()} between its steps; the thread that notices cancels.
 */
public final class Deadline {

	private final Duration timeout;

	private final long endNanos;

	/** Why the work was cancelled, set once: by the disconnect probe's thread, Tomcat's callbacks or the work. */
	private final AtomicReference<String> cancelled = new AtomicReference<>();

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

	/**
	 * Stops the work at its next {@link #check()}, saying {@code why}; the first reason given stays, whichever thread
	 * gives it.
	 * @return whether {@code why} is the reason given
	 */
	public boolean cancel(String why) {
		return this.cancelled.compareAndSet(null, why);
	}

	/** Whether the work should stop. */
	public boolean isOver() {
		return this.cancelled.get() != null || System.nanoTime() - this.endNanos >= 0;
	}

	/** The time left, zero when over. */
	public Duration remaining() {
		return (this.cancelled.get() != null) ? Duration.ZERO
				: Duration.ofNanos(Math.max(0, this.endNanos - System.nanoTime()));
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
		String why = this.cancelled.get();
		return new DeadlineExceededException((why != null) ? why : timedOut());
	}

	private String timedOut() {
		return "the request ran past its deadline of " + this.timeout.toMillis() + " ms (sample.request-timeout)";
	}

}
