package io.gpumem.autoconfigure.metrics;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import io.gpumem.autoconfigure.GpumemAutoConfiguration;
import io.gpumem.autoconfigure.GpumemPools;
import io.gpumem.device.GpumemDevices;

/**
 * gpumem's Micrometer meters, when Micrometer is present: a binder per subject (pools, devices, transfers,
 * admission, pressure), which Boot binds to its registries. Every meter carries the {@code device} tag.
 */
@AutoConfiguration(after = GpumemAutoConfiguration.class)
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({ GpumemDevices.class, GpumemPools.class })
public final class GpumemMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	GpumemPoolMetrics gpumemPoolMetrics(GpumemPools pools) {
		return new GpumemPoolMetrics(pools);
	}

	@Bean
	@ConditionalOnMissingBean
	GpumemDeviceMetrics gpumemDeviceMetrics(GpumemDevices devices) {
		return new GpumemDeviceMetrics(devices);
	}

	@Bean
	@ConditionalOnMissingBean
	GpumemTransferMetrics gpumemTransferMetrics(GpumemDevices devices) {
		return new GpumemTransferMetrics(devices);
	}

	@Bean
	@ConditionalOnMissingBean
	GpumemAdmissionMetrics gpumemAdmissionMetrics(GpumemDevices devices) {
		return new GpumemAdmissionMetrics(devices);
	}

	@Bean
	@ConditionalOnMissingBean
	GpumemPressureMetrics gpumemPressureMetrics(GpumemDevices devices) {
		return new GpumemPressureMetrics(devices);
	}

}
