package io.gpumem.docs.examples;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.gpumem.autoconfigure.GpumemPoolCustomizer;

/** The customizer of docs/starter.md, against a catalog of the sizes a model's tensors take. */
@Configuration(proxyBeanMethods = false)
class CustomizerExample {

	// tag::customizer[]
	@Bean
	GpumemPoolCustomizer ladderFromModel(ModelCatalog models) {
		return (pool, config) -> {
			if (pool.equals("device")) {
				config.sizeClasses(models.tensorSizes()).warm(models.largestTensor(), 4);
			}
		};
	}
	// end::customizer[]

	interface ModelCatalog {

		long[] tensorSizes();

		long largestTensor();

	}

}
