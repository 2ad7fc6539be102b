package io.gpumem.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.gpumem.autoconfigure.endpoint.GpumemEndpoint;
import io.gpumem.autoconfigure.endpoint.GpumemEndpointAutoConfiguration;
import io.gpumem.autoconfigure.health.GpumemHealthContributorAutoConfiguration;
import io.gpumem.autoconfigure.health.GpumemHealthIndicator;
import io.gpumem.autoconfigure.metrics.GpumemMetricsAutoConfiguration;
import io.gpumem.autoconfigure.metrics.GpumemPoolMetrics;
import io.gpumem.backend.GpuBackend;

import static org.assertj.core.api.Assertions.assertThat;

/** The endpoint, meters and health contributor appear only with their classes present (and the endpoint exposed). */
class OptionalPartsAutoConfigurationTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(GpumemAutoConfiguration.class, GpumemEndpointAutoConfiguration.class,
				GpumemMetricsAutoConfiguration.class, GpumemHealthContributorAutoConfiguration.class))
		.withPropertyValues("gpumem.backend=host", "gpumem.host.capacity=16MB",
				"management.endpoints.web.exposure.include=gpumem");

	@Test
	void withActuatorAndMicrometerPresentAllThreeAreThere() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(GpumemEndpoint.class)
			.hasSingleBean(GpumemPoolMetrics.class)
			.hasSingleBean(GpumemHealthIndicator.class));
	}

	@Test
	void theEndpointBacksOffUnlessExposed() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(GpumemAutoConfiguration.class,
					GpumemEndpointAutoConfiguration.class))
			.withPropertyValues("gpumem.backend=host", "gpumem.host.capacity=16MB")
			.run((context) -> assertThat(context).doesNotHaveBean(GpumemEndpoint.class).hasSingleBean(GpuBackend.class));
	}

	@Test
	void theEndpointBacksOffWhenItsAccessIsNone() {
		this.runner.withPropertyValues("management.endpoint.gpumem.access=NONE")
			.run((context) -> assertThat(context).doesNotHaveBean(GpumemEndpoint.class));
	}

	@Test
	void withoutMicrometerThereAreNoMeters() {
		this.runner.withClassLoader(new FilteredClassLoader(MeterRegistry.class))
			.run((context) -> assertThat(context).doesNotHaveBean(GpumemPoolMetrics.class)
				.hasSingleBean(GpumemEndpoint.class));
	}

	@Test
	void withoutActuatorThereIsNoEndpoint() {
		this.runner.withClassLoader(new FilteredClassLoader(Endpoint.class))
			.run((context) -> assertThat(context).doesNotHaveBean(GpumemEndpoint.class)
				.hasSingleBean(GpuBackend.class));
	}

	@Test
	void withoutBootsHealthSupportThereIsNoHealthContributor() {
		this.runner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
			.run((context) -> assertThat(context).doesNotHaveBean(GpumemHealthIndicator.class));
	}

	@Test
	void theHealthContributorCanBeDisabled() {
		this.runner.withPropertyValues("management.health.gpumem.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(GpumemHealthIndicator.class));
	}

	@Test
	void withGpumemDisabledNoneOfThemAppears() {
		this.runner.withPropertyValues("gpumem.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(GpumemEndpoint.class)
				.doesNotHaveBean(GpumemPoolMetrics.class)
				.doesNotHaveBean(GpumemHealthIndicator.class));
	}

}
