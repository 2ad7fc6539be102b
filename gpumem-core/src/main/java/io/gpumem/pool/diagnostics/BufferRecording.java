package io.gpumem.pool.diagnostics;

/**
 * Which buffers a pool's history records: their acquire and close, and for those whose frames it keeps, the stack
 * of their acquire while they are lent, so that an out-of-memory failure and the snapshot name the code holding the
 * memory (the frames are read only then).
 */
public enum BufferRecording {

	/** No buffer is recorded; the history keeps segments, trims and failures only. */
	OFF(Long.MAX_VALUE, Long.MAX_VALUE),

	/**
	 * Buffers of 1 MiB or more requested, the ones that fill a device; of those, the frames of every buffer of 16 MiB
	 * or more, and of a smaller one with the odds of its bytes to 16 MiB (one in every 16 MiB such buffers acquire),
	 * as heap profilers sample (TCMalloc, Go's), so that a 1 MiB hit takes a stack one time in sixteen.
	 */
	LARGE(1L << 20, 16L << 20),

	/**
	 * Every buffer is recorded with its frames: for finding a holder of small buffers, and for a log to replay, at
	 * a cost on every acquire.
	 */
	ALL(0, 0);

	private final long smallestBytes;

	private final long framesEveryBytes;

	BufferRecording(long smallestBytes, long framesEveryBytes) {
		this.smallestBytes = smallestBytes;
		this.framesEveryBytes = framesEveryBytes;
	}

	/** Whether a buffer of {@code bytes} requested is recorded. */
	boolean records(long bytes) {
		return bytes >= this.smallestBytes;
	}

	/**
	 * The bytes from which a recorded buffer always keeps its frames; a smaller one keeps them with the odds of its
	 * bytes to these. 0 where every one keeps them.
	 */
	long framesEveryBytes() {
		return this.framesEveryBytes;
	}

}
