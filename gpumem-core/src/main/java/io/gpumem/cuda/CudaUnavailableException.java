package io.gpumem.cuda;

import io.gpumem.memory.GpuMemoryException;

/** The CUDA backend was asked for but no usable CUDA device was found; says why, as the probe found it. */
public class CudaUnavailableException extends GpuMemoryException {

	private final CudaProbeResult probe;

	public CudaUnavailableException(CudaProbeResult probe) {
		super("The CUDA backend was requested but CUDA device " + probe.device() + " is not usable: " + probe.reason());
		this.probe = probe;
	}

	/** What the probe found. */
	public CudaProbeResult probe() {
		return this.probe;
	}

}
