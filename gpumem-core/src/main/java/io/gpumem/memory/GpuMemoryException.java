package io.gpumem.memory;

/** Base of the exceptions gpumem throws for failures of memory operations. */
public class GpuMemoryException extends RuntimeException {

	public GpuMemoryException(String message) {
		super(message);
	}

	public GpuMemoryException(String message, Throwable cause) {
		super(message, cause);
	}

}
