package io.gpumem.sample.limits;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.gpumem.sample.ConditionalOnGpumem;
import io.gpumem.sample.SampleProperties;

/** The request limits' shared state: the heap budget of the requests in flight. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnGpumem
class LimitsConfiguration {

	@Bean
	HeapBudget heapBudget(SampleProperties properties) {
		return new HeapBudget(properties.heapBudget().toBytes(), properties.queueTimeout());
	}

}
