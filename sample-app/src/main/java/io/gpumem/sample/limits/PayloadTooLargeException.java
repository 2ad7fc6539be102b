package io.gpumem.sample.limits;

/** A request larger than the service will ever take: its body, or the heap its work needs. */
public class PayloadTooLargeException extends RuntimeException {

	public PayloadTooLargeException(String message) {
		super(message);
	}

}
