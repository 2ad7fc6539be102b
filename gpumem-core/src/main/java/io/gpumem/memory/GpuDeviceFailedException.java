package io.gpumem.memory;

/**
 * Thrown by every operation on a device that failed for good ({@link DeviceHealth}): a fault left its context
 * unusable, and only a restart of the process can use the device again.
 */
public class GpuDeviceFailedException extends GpuMemoryException {

	private final DeviceFailure failure;

	public GpuDeviceFailedException(DeviceFailure failure, Throwable cause) {
		super(failure.describe(), cause);
		this.failure = failure;
	}

	/** What failed, how and where. */
	public DeviceFailure failure() {
		return this.failure;
	}

}
