package io.gpumem.memory;

/**
 * Thrown when memory cannot be allocated: by the backend, a limit, or a pool after its retries.
 * Its message and {@link #diagnostic()} say what was asked, what the device had, and what this process
 * holds.
 */
public class GpuOutOfMemoryException extends GpuMemoryException {

	private final OutOfMemoryDiagnostic diagnostic;

	public GpuOutOfMemoryException(OutOfMemoryDiagnostic diagnostic) {
		this(diagnostic, null);
	}

	public GpuOutOfMemoryException(OutOfMemoryDiagnostic diagnostic, Throwable cause) {
		super(diagnostic.describe(), cause);
		this.diagnostic = diagnostic;
	}

	/** The figures behind the message. */
	public OutOfMemoryDiagnostic diagnostic() {
		return this.diagnostic;
	}

}
