package io.gpumem.autoconfigure.diagnostics;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import io.gpumem.cuda.CudaUnavailableException;

/** Explains a startup that asked for the CUDA backend on a machine without a usable CUDA device. */
class CudaUnavailableFailureAnalyzer extends AbstractFailureAnalyzer<CudaUnavailableException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, CudaUnavailableException cause) {
		String description = "gpumem.backend is 'cuda' but CUDA device " + cause.probe().device()
				+ " is not usable: " + cause.probe().reason() + ".";
		String action = "Make a CUDA device available to this process (an NVIDIA driver for CUDA 12.0 or newer and "
				+ "a visible device), or set gpumem.backend to 'auto' to fall back to the host backend, or to 'host'.";
		return new FailureAnalysis(description, action, null);
	}

}
