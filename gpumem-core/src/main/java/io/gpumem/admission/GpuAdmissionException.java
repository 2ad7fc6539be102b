package io.gpumem.admission;

import java.time.Duration;

/** GPU work turned away because the device runs as much as it may and none finished in time. */
public class GpuAdmissionException extends RuntimeException {

	private final Duration retryAfter;

	public GpuAdmissionException(String message, Duration retryAfter) {
		super(message);
		this.retryAfter = retryAfter;
	}

	/** A fair time for the caller to wait before trying again. */
	public Duration retryAfter() {
		return this.retryAfter;
	}

}
