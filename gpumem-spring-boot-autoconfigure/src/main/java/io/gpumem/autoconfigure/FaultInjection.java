package io.gpumem.autoconfigure;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

import io.gpumem.allocator.FaultInjectingAllocator;
import io.gpumem.backend.GpuBackend;
import io.gpumem.memory.DeviceHealth;
import io.gpumem.memory.MemoryAllocator;

/** Puts {@code gpumem.fault-injection} between a pool and its allocator, and into a device, for tests. */
final class FaultInjection {

	private static final Log logger = LogFactory.getLog(FaultInjection.class);

	private FaultInjection() {
	}

	/** Makes {@code backend}'s device fail for good as {@code gpumem.fault-injection.device-fault-after} says. */
	static void device(GpuBackend backend, GpumemProperties.FaultInjection faults) {
		Long after = faults.getDeviceFaultAfter();
		if (after == null) {
			return;
		}
		if (after < 0) {
			throw new InvalidConfigurationPropertyValueException("gpumem.fault-injection.device-fault-after", after,
					"must be 0 or more: the acquires the device serves before it fails");
		}
		backend.health().injectFault(after);
		logger.warn("Device " + backend.deviceId() + " will fail for good at its acquire after " + after
				+ ", as with " + DeviceHealth.INJECTED_ERROR + " (gpumem.fault-injection.device-fault-after). "
				+ "This is for tests.");
	}

	/** {@code allocator}, refusing allocations as the properties say when they name {@code pool}. */
	static MemoryAllocator of(PoolName pool, MemoryAllocator allocator, GpumemProperties.FaultInjection faults) {
		Long everyNth = faults.getEveryNth();
		Double probability = faults.getProbability();
		if (everyNth == null && probability == null) {
			return allocator;
		}
		if (everyNth != null && probability != null) {
			throw new InvalidConfigurationPropertyValueException("gpumem.fault-injection.probability", probability,
					"set every-nth or probability, not both (every-nth is " + everyNth + ")");
		}
		for (PoolName named : faults.getPools()) {
			if (!named.allocates()) {
				throw new InvalidConfigurationPropertyValueException("gpumem.fault-injection.pools", named.part(),
						"names a pool with no allocator of its own: the pools that allocate are "
								+ String.join(", ", PoolName.allocating()));
			}
		}
		if (!faults.getPools().isEmpty() && !faults.getPools().contains(pool)) {
			return allocator;
		}
		FaultInjectingAllocator injecting = InvalidProperties.under("gpumem.fault-injection",
				() -> (everyNth != null) ? FaultInjectingAllocator.everyNth(allocator, everyNth)
						: FaultInjectingAllocator.withProbability(allocator, probability, faults.getSeed()));
		logger.warn("Pool '" + pool.part() + "' has allocations refused on purpose (gpumem.fault-injection): "
				+ ((everyNth != null) ? "every " + everyNth + "th" : "each with probability " + probability)
				+ ". This is for tests.");
		return injecting;
	}

}
