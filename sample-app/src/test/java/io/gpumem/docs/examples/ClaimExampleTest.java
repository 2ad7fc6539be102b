package io.gpumem.docs.examples;

import org.junit.jupiter.api.Test;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThat;

/** The claim of docs/overload.md covers the request's three buffers, and gives everything back. */
class ClaimExampleTest {

	@Test
	void theThreeBuffersTakeTheWholeClaimAndGoBack() {
		try (HostBackend backend = new HostBackend(64L << 20);
				StratifiedMemoryPool pool = new StratifiedMemoryPool(backend.allocator(MemoryKind.DEVICE),
						PoolConfig.builder("device").build())) {
			assertThat(ClaimExample.threeVectors(pool, 100_000)).isEqualTo(3 * pool.blockSize(400_000));
			assertThat(pool.statistics().inUseBytes()).isZero();
			assertThat(pool.statistics().claims().claimedBytes()).isZero();
			assertThat(pool.statistics().claims().admitted()).isEqualTo(1);
		}
	}

}
