package io.gpumem.sample.limits;

/** Work stopped because its request ran out of time or was cancelled; its memory has gone back. */
public class DeadlineExceededException extends RuntimeException {

	public DeadlineExceededException(String message) {
		super(message);
	}

}
