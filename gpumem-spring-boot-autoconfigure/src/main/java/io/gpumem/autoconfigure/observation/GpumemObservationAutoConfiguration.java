package io.gpumem.autoconfigure.observation;

import io.micrometer.observation.ObservationRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import io.gpumem.autoconfigure.GpumemAutoConfiguration;
import io.gpumem.device.GpuDevice;
import io.gpumem.device.GpumemDevices;
import io.gpumem.observation.MemoryObserver;

/**
 * Micrometer Observations of gpumem's memory work, when an {@link ObservationRegistry} is present:
 * {@code gpumem.acquire} around every pool's misses and {@code gpumem.transfer} around transfers, so
 * that traces show them within the request and Boot's meter handler times them. A
 * {@code GlobalObservationConvention} bean for {@link MemoryObservationContext} renames or retags them;
 * {@code management.observations.enable.gpumem=false} turns them off.
 */
@AutoConfiguration(after = GpumemAutoConfiguration.class,
		afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnBean({ ObservationRegistry.class, GpumemDevices.class })
public final class GpumemObservationAutoConfiguration {

	/**
	 * The primary device's observer; every device's pools and transfers get an observer of their own, tagged
	 * with their device.
	 */
	@Bean
	@ConditionalOnMissingBean
	MemoryObserver gpumemMemoryObserver(ObservationRegistry registry, GpumemDevices devices) {
		MemoryObserver primary = null;
		for (GpuDevice device : devices.all()) {
			MemoryObserver observer = new ObservationMemoryObserver(registry, String.valueOf(device.ordinal()));
			device.memoryPools().forEach((pool) -> pool.observeWith(observer));
			device.transfers().ifPresent((transfer) -> transfer.observeWith(observer));
			primary = (primary != null) ? primary : observer;
		}
		return primary;
	}

}
