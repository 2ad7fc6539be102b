package io.gpumem.autoconfigure.endpoint;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import io.gpumem.autoconfigure.GpumemAutoConfiguration;
import io.gpumem.autoconfigure.GpumemPools;
import io.gpumem.device.GpumemDevices;

/** The {@code gpumem} actuator endpoint, when actuator is present and the endpoint is exposed. */
@AutoConfiguration(after = GpumemAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean({ GpumemDevices.class, GpumemPools.class })
@ConditionalOnAvailableEndpoint(GpumemEndpoint.class)
public final class GpumemEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	GpumemEndpoint gpumemEndpoint(GpumemDevices devices, GpumemPools pools) {
		return new GpumemEndpoint(devices, pools);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(GpumemEndpoint.class)
	@ConditionalOnAvailableEndpoint(exposure = EndpointExposure.WEB)
	GpumemEndpointWebExtension gpumemEndpointWebExtension(GpumemEndpoint endpoint) {
		return new GpumemEndpointWebExtension(endpoint);
	}

}
