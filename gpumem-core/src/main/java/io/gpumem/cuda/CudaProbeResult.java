package io.gpumem.cuda;

import io.gpumem.memory.ByteSizes;

/**
 * What {@link CudaProbe} found: whether a CUDA device can be used and, in words a user can act on,
 * why or why not. Figures it could not learn are -1 (or {@code null} for the name).
 *
 * @param usable whether the device can be used
 * @param reason what was found, or what is missing and what to do about it
 * @param driverVersion the CUDA version the driver supports (1000 × major + 10 × minor)
 * @param deviceCount devices the driver reports
 * @param device the device ordinal probed
 * @param deviceName the device's name
 * @param computeCapability 10 × major + minor
 * @param totalBytes the device's memory
 * @param freeBytes the device's free memory when probed
 */
public record CudaProbeResult(boolean usable, String reason, int driverVersion, int deviceCount, int device,
		String deviceName, int computeCapability, long totalBytes, long freeBytes) {

	static CudaProbeResult unusable(int device, String reason) {
		return new CudaProbeResult(false, reason, -1, -1, device, null, -1, -1, -1);
	}

	static CudaProbeResult unusable(int device, int driverVersion, int deviceCount, String reason) {
		return new CudaProbeResult(false, reason, driverVersion, deviceCount, device, null, -1, -1, -1);
	}

	static CudaProbeResult usable(int device, int driverVersion, int deviceCount, String name, int computeCapability,
			long totalBytes, long freeBytes) {
		String reason = "CUDA device " + device + " (" + name + ", compute capability " + computeCapability / 10 + "."
				+ computeCapability % 10 + ", " + ByteSizes.format(totalBytes) + ") with a driver for CUDA "
				+ version(driverVersion);
		return new CudaProbeResult(true, reason, driverVersion, deviceCount, device, name, computeCapability,
				totalBytes, freeBytes);
	}

	/** A CUDA version such as 12040 as "12.4". */
	static String version(int version) {
		return version / 1000 + "." + (version % 1000) / 10;
	}

}
