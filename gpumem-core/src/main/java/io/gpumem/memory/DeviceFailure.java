package io.gpumem.memory;

import java.time.Instant;

/**
 * Why a device failed for good: the first error that left its context unusable, the call that met it, and
 * when and on which thread.
 *
 * @param device the device's ordinal
 * @param deviceName the device's name
 * @param error the error, such as {@code CUDA_ERROR_ILLEGAL_ADDRESS (700)}
 * @param call the call that met it, such as {@code cuStreamSynchronize}
 * @param thread the thread that made the call
 * @param at when
 */
public record DeviceFailure(int device, String deviceName, String error, String call, String thread, Instant at) {

	/** One sentence for messages, logs and health details. */
	public String describe() {
		return "device " + this.device + " (" + this.deviceName + ") failed for good with " + this.error + " in "
				+ this.call + " on thread " + this.thread + " at " + this.at
				+ "; its context is unusable and the process must be restarted to use it again";
	}

}
