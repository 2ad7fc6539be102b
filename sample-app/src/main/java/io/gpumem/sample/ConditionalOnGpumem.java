package io.gpumem.sample;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;

/**
 * Marks the parts of the sample that compute on pooled memory: with {@code gpumem.enabled=false} the
 * service starts without them, serving the actuator alone (the start-up benchmark compares the two).
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@ConditionalOnBooleanProperty(name = "gpumem.enabled", matchIfMissing = true)
public @interface ConditionalOnGpumem {

}
