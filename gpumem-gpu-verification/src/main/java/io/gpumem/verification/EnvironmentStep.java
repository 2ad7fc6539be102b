package io.gpumem.verification;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.gpumem.cuda.CudaProbe;
import io.gpumem.cuda.CudaProbeResult;
import io.gpumem.verification.StepResult.Status;

/**
 * The machine: Java, the operating system, and what the CUDA probe finds (device, compute capability,
 * memory, the CUDA version the driver supports and the one JCuda is built for), with the NVIDIA kernel
 * driver's version and {@code nvidia-smi}'s view where the machine has them.
 */
final class EnvironmentStep {

	private static final Path NVIDIA_DRIVER_VERSION = Path.of("/proc/driver/nvidia/version");

	private EnvironmentStep() {
	}

	static StepResult run(CudaProbeResult probe) {
		long start = System.nanoTime();
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
		details.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
				+ System.getProperty("os.arch"));
		details.put("processors", Runtime.getRuntime().availableProcessors());
		details.put("cudaUsable", probe.usable());
		details.put("probe", probe.reason());
		details.put("deviceName", probe.deviceName());
		details.put("deviceCount", probe.deviceCount());
		details.put("computeCapability", (probe.computeCapability() < 0) ? null
				: probe.computeCapability() / 10 + "." + probe.computeCapability() % 10);
		details.put("deviceTotalBytes", probe.totalBytes());
		details.put("deviceFreeBytes", probe.freeBytes());
		details.put("driverCudaVersion", cudaVersion(probe.driverVersion()));
		details.put("jcudaCudaVersion", probe.usable() ? cudaVersion(CudaProbe.jcuda().bindingVersion()) : null);
		details.put("nvidiaKernelDriver", firstLine(NVIDIA_DRIVER_VERSION));
		details.put("nvidiaSmi", nvidiaSmi());
		String summary = probe.usable()
				? probe.deviceName() + ", driver for CUDA " + details.get("driverCudaVersion") + ", JCuda built for CUDA "
						+ details.get("jcudaCudaVersion")
				: "no CUDA device: " + probe.reason();
		return new StepResult("device, driver and CUDA versions", probe.usable() ? Status.PASSED : Status.NO_GPU,
				summary, seconds(start), details);
	}

	static double seconds(long startNanos) {
		return Math.round((System.nanoTime() - startNanos) / 1e7) / 100.0;
	}

	private static String cudaVersion(int version) {
		return (version < 0) ? null : version / 1000 + "." + (version % 1000) / 10;
	}

	private static String firstLine(Path file) {
		try {
			return Files.isReadable(file) ? Files.readAllLines(file).get(0).strip() : null;
		}
		catch (IOException | IndexOutOfBoundsException ex) {
			return null;
		}
	}

	/** What {@code nvidia-smi} says of the GPUs, or null where it is not on the path. */
	private static String nvidiaSmi() {
		try {
			Process smi = new ProcessBuilder(List.of("nvidia-smi",
					"--query-gpu=name,driver_version,memory.total,pci.bus_id", "--format=csv,noheader"))
				.redirectErrorStream(true)
				.start();
			if (!smi.waitFor(20, TimeUnit.SECONDS)) {
				smi.destroyForcibly();
				return "nvidia-smi did not answer within 20 s";
			}
			return new String(smi.getInputStream().readAllBytes()).strip();
		}
		catch (IOException ex) {
			return null;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return null;
		}
	}

}
