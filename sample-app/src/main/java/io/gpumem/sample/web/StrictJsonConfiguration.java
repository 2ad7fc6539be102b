package io.gpumem.sample.web;

import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.cfg.CoercionAction;
import tools.jackson.databind.cfg.CoercionInputShape;
import tools.jackson.databind.type.LogicalType;

import org.springframework.boot.jackson.autoconfigure.JsonMapperBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Numbers in requests must be JSON numbers of the right kind: no {@code "NaN"} or {@code "12"} strings,
 * and no {@code 2.5} where a count or a node id is expected, instead of Jackson's lenient coercions.
 */
@Configuration(proxyBeanMethods = false)
class StrictJsonConfiguration {

	@Bean
	JsonMapperBuilderCustomizer strictNumbers() {
		return (builder) -> builder.disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
			.withCoercionConfig(LogicalType.Float,
					(config) -> config.setCoercion(CoercionInputShape.String, CoercionAction.Fail))
			.withCoercionConfig(LogicalType.Integer,
					(config) -> config.setCoercion(CoercionInputShape.String, CoercionAction.Fail)
						.setCoercion(CoercionInputShape.Float, CoercionAction.Fail));
	}

}
