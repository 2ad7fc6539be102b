package io.gpumem.memory;

/**
 * An acquire turned away so that others may go on: every thread holding memory of its pool was waiting for more,
 * and this one was chosen to give way. The request should close what it holds and run again from the start; unlike
 * its parent, retrying is expected to succeed.
 */
public class GpuRetryOutOfMemoryException extends GpuOutOfMemoryException {

	private final long heldBytes;

	public GpuRetryOutOfMemoryException(OutOfMemoryDiagnostic diagnostic, long heldBytes) {
		super(diagnostic);
		this.heldBytes = heldBytes;
	}

	/** The bytes the thread held of the pool when it was told to give way: what it should close. */
	public long heldBytes() {
		return this.heldBytes;
	}

}
