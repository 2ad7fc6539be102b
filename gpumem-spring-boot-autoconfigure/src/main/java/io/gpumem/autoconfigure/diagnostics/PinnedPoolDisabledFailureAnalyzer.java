package io.gpumem.autoconfigure.diagnostics;

import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;

import io.gpumem.reduction.ReductionBufferCache;
import io.gpumem.transfer.Transfers;

/**
 * Explains a missing {@link Transfers} or {@link ReductionBufferCache} bean when
 * {@code gpumem.pinned-pool.enabled=false} is why: both stage through the pinned pool.
 */
class PinnedPoolDisabledFailureAnalyzer extends AbstractFailureAnalyzer<NoSuchBeanDefinitionException>
		implements Ordered {

	private final Environment environment;

	PinnedPoolDisabledFailureAnalyzer(Environment environment) {
		this.environment = environment;
	}

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, NoSuchBeanDefinitionException cause) {
		Class<?> type = cause.getBeanType();
		if ((type != Transfers.class && type != ReductionBufferCache.class)
				|| this.environment.getProperty("gpumem.pinned-pool.enabled", Boolean.class, true)) {
			return null;
		}
		return new FailureAnalysis("A bean of type " + type.getName() + " was required, but gpumem creates none "
				+ "because gpumem.pinned-pool.enabled is false: transfers and the reduction cache stage their "
				+ "copies through the pinned pool.", "Remove gpumem.pinned-pool.enabled=false (or set it to true), "
						+ "or define your own " + type.getSimpleName() + " bean.", cause);
	}

	/** Ahead of Spring Boot's analysis of a missing bean, which does not name the property. */
	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

}
