package io.gpumem.admission;

import java.time.Duration;

/** GPU work turned away because what it needs, a permit or bytes of the pool's memory, did not come free in time. */
public class GpuAdmissionException extends RuntimeException {

	private final Refused refused;

	private final Duration retryAfter;

	public GpuAdmissionException(Refused refused, String message, Duration retryAfter) {
		super(message);
		this.refused = refused;
		this.retryAfter = retryAfter;
	}

	/** What the work lacked when its wait ran out. */
	public Refused refused() {
		return this.refused;
	}

	/** A fair time for the caller to wait before trying again. */
	public Duration retryAfter() {
		return this.retryAfter;
	}

	/** What an admission refused. */
	public enum Refused {

		/** A permit: as much work as the limit allows was running. */
		PERMIT,

		/** Bytes: the memory of those admitted before, and what the pool lends outside them, left too little. */
		BYTES

	}

}
