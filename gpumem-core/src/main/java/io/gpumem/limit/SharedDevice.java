package io.gpumem.limit;

/**
 * A device as the sources of its limit see it.
 *
 * @param ordinal the device's ordinal in this process, after {@code CUDA_VISIBLE_DEVICES} renumbered the devices:
 * the number per-device variables use
 * @param cardBytes the memory the driver reports for the whole device (or its MIG instance)
 * @param pciBusId the device's PCI bus id, as in {@code 0000:3b:00.0}, or {@code null} where the backend knows none
 * @param visibleAs the entry of {@code CUDA_VISIBLE_DEVICES} that made the device this ordinal (an index of the
 * machine, a {@code GPU-} or {@code MIG-} UUID), or {@code null} where the variable is not set
 */
public record SharedDevice(int ordinal, long cardBytes, String pciBusId, String visibleAs) {

	public SharedDevice {
		if (ordinal < 0) {
			throw new IllegalArgumentException("a device ordinal cannot be negative: " + ordinal);
		}
		if (cardBytes <= 0) {
			throw new IllegalArgumentException("a device has memory: " + cardBytes + " bytes");
		}
	}

	/** Whether the device is a MIG instance, whose memory the driver reports as the instance's own. */
	public boolean migInstance() {
		return this.visibleAs != null && this.visibleAs.startsWith("MIG-");
	}

}
