package io.gpumem.autoconfigure.diagnostics;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.NoSuchBeanDefinitionException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.mock.env.MockEnvironment;

import io.gpumem.transfer.Transfers;

import static org.assertj.core.api.Assertions.assertThat;

class PinnedPoolDisabledFailureAnalyzerTest {

	private final NoSuchBeanDefinitionException missingTransfers = new NoSuchBeanDefinitionException(Transfers.class);

	@Test
	void namesThePropertyThatTurnedThePinnedPoolOff() {
		FailureAnalysis analysis = new PinnedPoolDisabledFailureAnalyzer(
				new MockEnvironment().withProperty("gpumem.pinned-pool.enabled", "false"))
			.analyze(new IllegalStateException("context failed", this.missingTransfers));
		assertThat(analysis.getDescription()).contains("io.gpumem.transfer.Transfers",
				"gpumem.pinned-pool.enabled is false");
		assertThat(analysis.getAction()).contains("Remove gpumem.pinned-pool.enabled=false", "your own Transfers bean");
	}

	@Test
	void leavesOtherMissingBeansToSpringBoot() {
		PinnedPoolDisabledFailureAnalyzer enabled = new PinnedPoolDisabledFailureAnalyzer(new MockEnvironment());
		assertThat(enabled.analyze(this.missingTransfers)).isNull();
		PinnedPoolDisabledFailureAnalyzer disabled = new PinnedPoolDisabledFailureAnalyzer(
				new MockEnvironment().withProperty("gpumem.pinned-pool.enabled", "false"));
		assertThat(disabled.analyze(new NoSuchBeanDefinitionException(String.class))).isNull();
	}

}
