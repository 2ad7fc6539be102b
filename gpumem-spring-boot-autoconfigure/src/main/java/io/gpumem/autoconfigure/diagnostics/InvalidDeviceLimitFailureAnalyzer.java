package io.gpumem.autoconfigure.diagnostics;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import io.gpumem.limit.InvalidLimitException;

/**
 * Explains a device memory limit gpumem could not read (a malformed {@code CUDA_DEVICE_MEMORY_LIMIT_0}, say): the
 * variable or file, its value and the form it accepts, so that the service does not plan for memory it may not have.
 */
class InvalidDeviceLimitFailureAnalyzer extends AbstractFailureAnalyzer<InvalidLimitException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, InvalidLimitException cause) {
		return new FailureAnalysis("gpumem could not read the device memory limit that " + cause.origin()
				+ " sets: its value is '" + cause.value() + "', and it must be " + cause.acceptedForm() + ".",
				"Set " + cause.origin() + " to " + cause.acceptedForm()
						+ ", or remove it where no limit is meant (docs/deployment.md lists what gpumem reads).",
				cause);
	}

}
