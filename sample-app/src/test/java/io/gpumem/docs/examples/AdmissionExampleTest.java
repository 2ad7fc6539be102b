package io.gpumem.docs.examples;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThat;

/** The admission of docs/overload.md covers the request's three buffers, and gives everything back. */
class AdmissionExampleTest {

	@Test
	void theThreeBuffersTakeTheWholePermitAndGoBack() {
		try (HostBackend backend = new HostBackend(64L << 20);
				StratifiedMemoryPool pool = new StratifiedMemoryPool(backend.allocator(MemoryKind.DEVICE),
						PoolConfig.builder("device").build())) {
			GpuAdmission admission = GpuAdmission.of(pool, Duration.ofSeconds(2));
			assertThat(AdmissionExample.threeVectors(admission, pool, 100_000)).isEqualTo(3 * pool.blockSize(400_000));
			assertThat(pool.statistics().inUseBytes()).isZero();
			assertThat(admission.statistics().claimedBytes()).isZero();
			assertThat(admission.statistics().admitted()).isEqualTo(1);
		}
	}

}
