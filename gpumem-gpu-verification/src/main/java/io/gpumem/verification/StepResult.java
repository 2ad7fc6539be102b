package io.gpumem.verification;

import java.util.Map;

/**
 * What one step of the verification found.
 *
 * @param name what the step checks
 * @param status how it ended
 * @param summary one line for the text report
 * @param seconds how long it took
 * @param details its figures and findings, written into the JSON report
 */
record StepResult(String name, Status status, String summary, double seconds, Map<String, Object> details) {

	/** How a step ended. */
	enum Status {

		/** Everything it checked held. */
		PASSED,

		/** Something it checked did not hold, or it could not run. */
		FAILED,

		/** It needs a CUDA device and none was found; not a failure. */
		NO_GPU

	}

}
