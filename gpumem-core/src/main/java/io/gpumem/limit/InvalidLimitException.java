package io.gpumem.limit;

import java.util.Objects;

/**
 * A limit's source that is present but cannot be read, naming where it was read, its value and the form it
 * accepts, so that a service refuses to start rather than plan for memory it may not have.
 */
public final class InvalidLimitException extends IllegalArgumentException {

	private static final long serialVersionUID = 1L;

	private final String origin;

	private final String value;

	private final String acceptedForm;

	/**
	 * @param origin where the value was read, as in {@code CUDA_DEVICE_MEMORY_LIMIT_0}
	 * @param value the value as read
	 * @param acceptedForm what the source accepts, as in {@code a size such as 300m or 4g}
	 */
	public InvalidLimitException(String origin, String value, String acceptedForm) {
		super(origin + " is '" + value + "', which gpumem cannot read as a device memory limit: it must be "
				+ acceptedForm);
		this.origin = Objects.requireNonNull(origin, "origin");
		this.value = Objects.requireNonNull(value, "value");
		this.acceptedForm = Objects.requireNonNull(acceptedForm, "acceptedForm");
	}

	/** Where the value was read: an environment variable's name or a file. */
	public String origin() {
		return this.origin;
	}

	public String value() {
		return this.value;
	}

	/** The form the source accepts. */
	public String acceptedForm() {
		return this.acceptedForm;
	}

}
