package io.gpumem.autoconfigure;

import java.lang.management.ManagementFactory;

import com.sun.management.HotSpotDiagnosticMXBean;
import com.sun.management.OperatingSystemMXBean;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

import io.gpumem.memory.ByteSizes;

/**
 * Checks that the memory the host backend emulates can be had: its device and pinned memory are direct
 * buffers, so together they must fit the machine (or startup stops, naming {@code gpumem.host.capacity}),
 * and should fit the JVM's direct-memory limit (or a warning says how to raise it), which by default is
 * the maximum heap.
 */
final class HostMemoryCheck {

	private static final Log logger = LogFactory.getLog(HostMemoryCheck.class);

	private HostMemoryCheck() {
	}

	/** Checks the host backend's capacities against this JVM and machine. */
	static void check(long deviceBytes, long pinnedBytes) {
		check(deviceBytes, pinnedBytes, directMemoryLimit(), machineMemory());
	}

	/**
	 * Checks the capacities against the given limits.
	 * @param machineBytes the machine's memory, or 0 when unknown
	 * @throws InvalidConfigurationPropertyValueException if they exceed the machine's memory
	 */
	static void check(long deviceBytes, long pinnedBytes, long directLimitBytes, long machineBytes) {
		long total = deviceBytes + pinnedBytes;
		String emulated = "the emulated device (" + ByteSizes.format(deviceBytes) + ") and its pinned memory ("
				+ ByteSizes.format(pinnedBytes) + ") take " + ByteSizes.format(total);
		if (machineBytes > 0 && total > machineBytes) {
			throw new InvalidConfigurationPropertyValueException("gpumem.host.capacity", ByteSizes.format(deviceBytes),
					emulated + ", more than this machine's " + ByteSizes.format(machineBytes)
							+ " of memory; lower gpumem.host.capacity (and gpumem.host.pinned-capacity)");
		}
		if (total > directLimitBytes) {
			logger.warn("gpumem host backend: " + emulated + " of direct memory, more than this JVM's limit of "
					+ ByteSizes.format(directLimitBytes) + "; allocations beyond it will fail as out of memory. "
					+ "Start the JVM with -XX:MaxDirectMemorySize=" + (total >> 20)
					+ "m or more, or lower gpumem.host.capacity (and gpumem.host.pinned-capacity).");
		}
	}

	/** The JVM's direct-memory limit: {@code -XX:MaxDirectMemorySize}, or the maximum heap when it is not set. */
	static long directMemoryLimit() {
		try {
			String value = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
				.getVMOption("MaxDirectMemorySize")
				.getValue();
			long limit = Long.parseLong(value);
			return (limit > 0) ? limit : Runtime.getRuntime().maxMemory();
		}
		catch (RuntimeException ex) {
			return Runtime.getRuntime().maxMemory();
		}
	}

	private static long machineMemory() {
		return (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os)
				? os.getTotalMemorySize() : 0;
	}

}
