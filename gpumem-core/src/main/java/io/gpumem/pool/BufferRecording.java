package io.gpumem.pool;

/**
 * Which buffers a pool's history records: their acquire and close, and the stack of their acquire while they are
 * lent, so that an out-of-memory failure and the snapshot name the code holding the memory (the frames are read
 * only then).
 */
public enum BufferRecording {

	/** No buffer is recorded; the history keeps segments, trims and failures only. */
	OFF(Long.MAX_VALUE),

	/** Buffers of 1 MiB or more requested, the ones that fill a device: about a microsecond per such acquire. */
	LARGE(1L << 20),

	/**
	 * Every buffer is recorded: for finding a holder of small buffers, and for a log to replay, at a cost on every
	 * acquire.
	 */
	ALL(0);

	private final long smallestBytes;

	BufferRecording(long smallestBytes) {
		this.smallestBytes = smallestBytes;
	}

	/** Whether a buffer of {@code bytes} requested is recorded. */
	boolean records(long bytes) {
		return bytes >= this.smallestBytes;
	}

}
