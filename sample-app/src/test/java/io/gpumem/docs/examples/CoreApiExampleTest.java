package io.gpumem.docs.examples;

import org.junit.jupiter.api.Test;

import io.gpumem.pool.PoolStatistics;

import static org.assertj.core.api.Assertions.assertThat;

/** The core API's example runs as docs/core-api.md describes it. */
class CoreApiExampleTest {

	@Test
	void theExampleWarmsLendsAndReturns() {
		PoolStatistics stats = CoreApiExample.lendOnce();

		assertThat(stats.requests()).isEqualTo(1);
		assertThat(stats.inUseBytes()).isZero();
		assertThat(stats.cachedBytes()).isGreaterThanOrEqualTo(100L * 65536 + 4096);
	}

}
