package io.gpumem.admission;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.gpumem.backend.GpuBackend;
import io.gpumem.pool.LeakDetection;
import io.gpumem.pool.PoolSetup;
import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A permit dropped without close, with a buffer lent on it, is reclaimed as a leaked buffer is, on every setup: its
 * bytes go back to the admission, its buffer's block to the pool, and a new request as large is let in.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class PermitLeaksTest {

	private static final long MIB = 1L << 20;

	private GpuBackend backend;

	private StratifiedMemoryPool pool;

	@AfterEach
	void close() {
		if (this.pool != null) {
			this.pool.close();
			this.backend.close();
		}
	}

	@ParameterizedTest
	@EnumSource(PoolSetup.class)
	void aPermitDroppedWithoutCloseIsReclaimedWithWhatWasLentOnIt(PoolSetup setup) throws Exception {
		this.backend = setup.open(100 * MIB);
		this.pool = setup.pool(this.backend, "device", (config) -> config.leakDetection(LeakDetection.SIMPLE));
		GpuAdmission admission = new GpuAdmission("device 0", 0, Duration.ofSeconds(1), this.pool);
		Thread leaking = new Thread(() -> admission.enter(60 * MIB, Duration.ZERO).acquire(10 * MIB).fill((byte) 1));
		leaking.start();
		leaking.join();
		assertThat(admission.statistics().claimedBytes()).isEqualTo(60 * MIB);
		await("the permit and its buffer reclaimed and counted").atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
			System.gc();
			this.pool.trim(Long.MAX_VALUE);
			assertThat(admission.statistics().active()).as("permits open").isZero();
			assertThat(admission.statistics().leaked()).as("permits dropped").isEqualTo(1);
			assertThat(this.pool.statistics().inUseBytes()).as("in use").isZero();
			assertThat(this.pool.statistics().leakedBuffers()).as("the buffer lent on the permit").isEqualTo(1);
		});
		AdmissionStatistics statistics = admission.statistics();
		assertThat(statistics.claimedBytes()).isZero();
		assertThat(statistics.lentBytes()).isZero();
		try (GpuAdmission.Permit again = admission.enter(60 * MIB, Duration.ofSeconds(1))) {
			assertThat(again.acquire(60 * MIB).size()).isEqualTo(60 * MIB);
		}
	}

}
