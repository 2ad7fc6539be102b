package io.gpumem.cuda;

import java.util.function.Supplier;

import io.gpumem.memory.MemoryInfo;

/**
 * Finds out, without ever throwing, whether a CUDA device can be used: JCuda on the class path, its
 * natives and {@code libcuda} loadable, a driver new enough for JCuda, the device present, its primary
 * context usable and its memory info readable.
 * <p>
 * JCuda's natives are loaded at most once per class loader: a JVM that failed to load them once fails
 * the same way ever after (with a less helpful error), so the first outcome is remembered.
 */
public final class CudaProbe {

	private static final String JCUDA_CLASS = "jcuda.driver.JCudaDriver";

	private CudaProbe() {
	}

	/** Probes device {@code device} through JCuda. */
	public static CudaProbeResult probe(int device) {
		return probe(device, CudaProbe::jcuda);
	}

	/** Probes device {@code device} through the driver {@code loader} gives, which may throw. */
	public static CudaProbeResult probe(int device, Supplier<? extends CudaDriver> loader) {
		CudaDriver driver;
		try {
			driver = loader.get();
		}
		catch (Throwable ex) {
			return CudaProbeResult.unusable(device, loadFailure(ex));
		}
		try {
			return probe(device, driver);
		}
		catch (Throwable ex) {
			return CudaProbeResult.unusable(device, "probing the CUDA driver failed: " + ex);
		}
	}

	/**
	 * The driver through JCuda, loading JCuda's natives on first use.
	 * @throws CudaUnavailableException if JCuda or the CUDA driver library cannot be loaded
	 */
	public static CudaDriver jcuda() {
		JCudaLoader.Outcome outcome = JCudaLoader.OUTCOME;
		if (outcome.driver() == null) {
			throw new CudaUnavailableException(CudaProbeResult.unusable(0, outcome.failure()));
		}
		return outcome.driver();
	}

	private static CudaProbeResult probe(int device, CudaDriver driver) {
		int driverVersion = driver.driverVersion();
		int needed = driver.bindingVersion();
		if (driverVersion < needed) {
			return CudaProbeResult.unusable(device, driverVersion, -1, tooOld(driverVersion, needed));
		}
		try {
			driver.init();
		}
		catch (CudaException ex) {
			String reason = switch (ex.code()) {
				case CudaException.NO_DEVICE -> "the NVIDIA driver found no CUDA device (" + ex.getMessage() + ")";
				case CudaException.INSUFFICIENT_DRIVER -> tooOld(driverVersion, needed);
				default -> "the CUDA driver could not be initialized: " + ex.getMessage();
			};
			return CudaProbeResult.unusable(device, driverVersion, -1, reason);
		}
		int count = driver.deviceCount();
		if (count == 0) {
			return CudaProbeResult.unusable(device, driverVersion, 0, "the NVIDIA driver found no CUDA device");
		}
		if (device < 0 || device >= count) {
			return CudaProbeResult.unusable(device, driverVersion, count, "device " + device
					+ " was asked for but the driver found " + count + " device(s), numbered from 0");
		}
		String name;
		int computeCapability;
		try {
			name = driver.deviceName(device);
			computeCapability = driver.computeCapability(device);
		}
		catch (CudaException ex) {
			return CudaProbeResult.unusable(device, driverVersion, count,
					"device " + device + " could not be queried: " + ex.getMessage());
		}
		MemoryInfo memory;
		try {
			Object context = driver.retainPrimaryContext(device);
			try {
				driver.setCurrentContext(context);
				memory = driver.memoryInfo();
			}
			finally {
				driver.releasePrimaryContext(device);
			}
		}
		catch (CudaException ex) {
			return CudaProbeResult.unusable(device, driverVersion, count, "device " + device + " (" + name
					+ ") is present but a context on it could not be used: " + ex.getMessage()
					+ "; check that no other process holds it in exclusive mode and that it is healthy (nvidia-smi)");
		}
		return CudaProbeResult.usable(device, driverVersion, count, name, computeCapability, memory.totalBytes(),
				memory.freeBytes());
	}

	private static String tooOld(int driverVersion, int needed) {
		return "the NVIDIA driver supports CUDA " + CudaProbeResult.version(driverVersion) + " but JCuda needs CUDA "
				+ CudaProbeResult.version(needed) + " or newer: update the NVIDIA driver";
	}

	private static String loadFailure(Throwable ex) {
		if (ex instanceof CudaUnavailableException unavailable) {
			return unavailable.probe().reason();
		}
		return "the CUDA driver binding could not be loaded: " + ex;
	}

	/** Loads JCuda once, remembering how it went. */
	private static final class JCudaLoader {

		static final Outcome OUTCOME = load();

		private static Outcome load() {
			ClassLoader classLoader = CudaProbe.class.getClassLoader();
			try {
				Class.forName(JCUDA_CLASS, false, classLoader);
			}
			catch (ClassNotFoundException | LinkageError ex) {
				return new Outcome(null, "JCuda is not on the class path: add org.jcuda:jcuda (12.6.0) to use CUDA");
			}
			try {
				Class.forName(JCUDA_CLASS, true, classLoader);
				return new Outcome(new JCudaBinding(), null);
			}
			catch (Throwable ex) {
				String noNatives = JCudaNatives.missingFor(classLoader);
				if (noNatives != null) {
					return new Outcome(null, noNatives);
				}
				if (ex instanceof UnsatisfiedLinkError) {
					return new Outcome(null, "the CUDA driver library (libcuda) could not be loaded, so no NVIDIA "
							+ "driver is installed or it is not on the library path (" + firstLine(ex) + ")");
				}
				return new Outcome(null, "JCuda's native libraries could not be loaded: " + firstLine(ex));
			}
		}

		/**
		 * The line of a load failure that names what is missing. JCuda's message nests the stack traces of
		 * its attempts; the last attempt's error says which library could not be opened.
		 */
		private static String firstLine(Throwable ex) {
			String message = String.valueOf(ex.getMessage());
			String found = message.lines().findFirst().orElse(message).strip();
			for (String line : (Iterable<String>) message.lines()::iterator) {
				if (line.startsWith(UnsatisfiedLinkError.class.getName() + ": ")) {
					found = line.substring(UnsatisfiedLinkError.class.getName().length() + 2).strip();
				}
			}
			return found;
		}

		record Outcome(CudaDriver driver, String failure) {
		}

	}

}
