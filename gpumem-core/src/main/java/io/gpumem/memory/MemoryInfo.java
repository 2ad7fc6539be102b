package io.gpumem.memory;

/**
 * Free and total bytes of a device, as {@code cuMemGetInfo} reports them.
 *
 * @param freeBytes bytes not allocated by anyone on the device
 * @param totalBytes the device's capacity
 */
public record MemoryInfo(long freeBytes, long totalBytes) {

	public MemoryInfo {
		if (totalBytes < 0 || freeBytes < 0 || freeBytes > totalBytes) {
			throw new IllegalArgumentException(
					"free bytes must lie in [0, total bytes]: free=" + freeBytes + ", total=" + totalBytes);
		}
	}

	/** Bytes allocated on the device, by this process or any other. */
	public long usedBytes() {
		return this.totalBytes - this.freeBytes;
	}

	/** The fraction of the device's capacity in use, from 0 to 1. */
	public double utilization() {
		return (this.totalBytes != 0) ? (double) usedBytes() / this.totalBytes : 0.0;
	}

}
