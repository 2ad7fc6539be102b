package io.gpumem.transfer;

/**
 * What a {@link Transfers} has moved, per direction.
 *
 * @param uploads arrays copied to the device
 * @param downloads buffers copied back into arrays
 */
public record TransferStatistics(Direction uploads, Direction downloads) {

	/**
	 * Transfers in one direction.
	 *
	 * @param transfers transfers started
	 * @param bytes bytes they staged: the arrays' bytes, with each part aligned to its element size
	 * @param completed transfers seen complete ({@link Transfer#await()} or the synchronous methods)
	 * @param nanos time from the start of each completed transfer to its completion, all together
	 */
	public record Direction(long transfers, long bytes, long completed, long nanos) {
	}

}
