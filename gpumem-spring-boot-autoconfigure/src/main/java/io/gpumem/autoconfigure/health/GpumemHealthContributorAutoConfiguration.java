package io.gpumem.autoconfigure.health;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.HealthContributor;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

import io.gpumem.autoconfigure.GpumemAutoConfiguration;
import io.gpumem.device.GpuDevice;
import io.gpumem.device.GpumemDevices;

/**
 * The {@code gpumem} health contributor, when Boot's health support is present and it is enabled: one
 * indicator for one device, or one per device ({@code gpumem/device0}, {@code gpumem/device1}) when gpumem
 * manages several, the group's status the worst of theirs.
 */
@AutoConfiguration(after = GpumemAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(GpumemDevices.class)
@ConditionalOnEnabledHealthIndicator("gpumem")
public final class GpumemHealthContributorAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "gpumemHealthIndicator")
	HealthContributor gpumemHealthIndicator(GpumemDevices devices) {
		if (devices.all().size() == 1) {
			return indicator(devices.primary());
		}
		Map<String, GpumemHealthIndicator> indicators = new LinkedHashMap<>();
		devices.all().forEach((device) -> indicators.put("device" + device.ordinal(), indicator(device)));
		return CompositeHealthContributor.fromMap(indicators);
	}

	private static GpumemHealthIndicator indicator(GpuDevice device) {
		return new GpumemHealthIndicator(device.backend(), device.pressure().orElse(null));
	}

}
