package io.gpumem.autoconfigure.health;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

import io.gpumem.autoconfigure.GpumemAutoConfiguration;
import io.gpumem.backend.GpuBackend;
import io.gpumem.pressure.PressureHandler;

/** The {@code gpumem} health contributor, when Boot's health support is present and it is enabled. */
@AutoConfiguration(after = GpumemAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(GpuBackend.class)
@ConditionalOnEnabledHealthIndicator("gpumem")
public final class GpumemHealthContributorAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "gpumemHealthIndicator")
	GpumemHealthIndicator gpumemHealthIndicator(GpuBackend backend, ObjectProvider<PressureHandler> pressure) {
		return new GpumemHealthIndicator(backend, pressure.getIfAvailable());
	}

}
