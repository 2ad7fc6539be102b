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

/** gpumem's Micrometer meters, when Micrometer is present; Boot binds the binder to its registries. */
@AutoConfiguration(after = GpumemAutoConfiguration.class)
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({ GpumemDevices.class, GpumemPools.class })
public final class GpumemMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	GpumemMeterBinder gpumemMeterBinder(GpumemDevices devices, GpumemPools pools) {
		return new GpumemMeterBinder(devices, pools);
	}

}
