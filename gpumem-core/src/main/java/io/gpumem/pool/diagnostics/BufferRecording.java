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
	 * Buffers of 1 MiB or more requested, the ones that fill a device; of those, the frames of a buffer with the odds
	 * of its bytes to a sixteenth of the device, from 16 MiB to 1 GiB (one stack per sixteenth of the device such
	 * buffers acquire), as heap profilers sample (TCMalloc, Go's): a holder of half the device is sampled eight times
	 * over, and a 16 MiB hit on an 80 GB device takes a stack one time in 64.
	 */
	LARGE(1L << 20, 16L << 20),

	/**
	 * Every buffer is recorded with its frames: for finding a holder of small buffers, and for a log to replay, at
	 * a cost on every acquire.
	 */
	ALL(0, 0);

	/** Of a device, the share acquired for which {@link #LARGE} keeps one buffer's frames. */
	private static final long DEVICE_SHARE = 16;

	/** The most bytes acquired for which {@link #LARGE} keeps one buffer's frames, whatever the device. */
	private static final long MOST_BYTES_PER_FRAMES = 1L << 30;

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
	 * The bytes from which a recorded buffer always keeps its frames on a device of {@code deviceBytes}; a smaller one
	 * keeps them with the odds of its bytes to these. 0 where every one keeps them.
	 */
	long framesEveryBytes(long deviceBytes) {
		if (this.framesEveryBytes == 0 || this.framesEveryBytes == Long.MAX_VALUE) {
			return this.framesEveryBytes;
		}
		return Math.min(Math.max(this.framesEveryBytes, deviceBytes / DEVICE_SHARE), MOST_BYTES_PER_FRAMES);
	}

}
