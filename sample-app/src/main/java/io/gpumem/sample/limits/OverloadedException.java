package io.gpumem.sample.limits;

import java.time.Duration;

/** A request the service could take, but not now: it should come back after {@link #retryAfter()}. */
public class OverloadedException extends RuntimeException {

	private final Duration retryAfter;

	public OverloadedException(String message, Duration retryAfter) {
		super(message);
		this.retryAfter = retryAfter;
	}

	/** When the client may try again. */
	public Duration retryAfter() {
		return this.retryAfter;
	}

}
