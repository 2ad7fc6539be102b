package io.gpumem.pool;

/**
 * Which buffers keep the stack of their acquire while lent, so that an out-of-memory failure names the code
 * holding the memory (its frames are read only then).
 */
public enum FrameRecording {

	/** No buffer records its frames. */
	OFF(Long.MAX_VALUE),

	/** Buffers of 1 MiB or more, the ones that fill a device, record theirs: about a microsecond per such acquire. */
	LARGE(1L << 20),

	/** Every buffer records its frames: for finding a holder of small buffers, at a cost on every acquire. */
	ALL(0);

	private final long smallestBytes;

	FrameRecording(long smallestBytes) {
		this.smallestBytes = smallestBytes;
	}

	/** Whether a buffer of a block of {@code bytes} records its frames. */
	boolean records(long bytes) {
		return bytes >= this.smallestBytes;
	}

}
