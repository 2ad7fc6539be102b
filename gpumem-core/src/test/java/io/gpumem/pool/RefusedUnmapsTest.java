package io.gpumem.pool;

import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.CudaException;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.pool.diagnostics.MemoryEvent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A pool over expandable segments whose driver refuses an unmap, as a failed device does: the runs refused stay
 * mapped, counted and cached for a later trim; a close ends its lend all the same, and a trim tells its caller.
 */
class RefusedUnmapsTest {

	private static final long MIB = 1L << 20;

	/** The call the driver refuses once, as it begins, where one is set. */
	private final AtomicReference<String> refused = new AtomicReference<>();

	private final FakeCudaDriver driver = new FakeCudaDriver(64 * MIB).pausingMemoryCalls((call) -> {
		if (this.refused.compareAndSet(call, null)) {
			throw new CudaException(call, 1, "CUDA_ERROR_INVALID_VALUE");
		}
	});

	private final CudaBackend backend = CudaBackend.open(this.driver, 0);

	@AfterEach
	void close() {
		this.backend.close();
	}

	/**
	 * A close that brings the pool over {@code max-cached} ends its lend, recorded and counted, though the driver
	 * refuses the unmap of what is cached beyond: that memory stays for the next trim.
	 */
	@Test
	void aCloseEndsItsLendThoughTheDriverRefusesTheUnmapBeyondIt() {
		StratifiedMemoryPool pool = PoolSetup.CUDA_EXPANDABLE.pool(this.backend, "device",
				(config) -> config.maxCachedBytes(0));
		PooledBuffer buffer = pool.acquire(8 * MIB);
		this.refused.set("cuMemUnmap");

		buffer.close();
		assertThat(this.refused.get()).as("the unmap refused").isNull();
		PoolStatistics statistics = pool.statistics();
		assertThat(statistics.inUseBytes()).isZero();
		assertThat(statistics.returns()).isOne();
		assertThat(pool.history().orElseThrow().events()).extracting(MemoryEvent::type)
			.containsOnlyOnce(MemoryEvent.Type.CLOSE);
		assertThat(statistics.reservedBytes()).as("the runs refused, cached")
			.isEqualTo(statistics.cachedBytes())
			.isEqualTo(8 * MIB)
			.isEqualTo(this.driver.usedBytes(0));
		assertThat(pool.trim(0)).isEqualTo(8 * MIB);
		assertThat(this.driver.usedBytes(0)).isZero();
		pool.close();
	}

	/** A trim whose unmap the driver refuses fails with the driver's error; the next trim reaches what it refused. */
	@Test
	void aTrimTheDriverRefusesFailsAndLeavesItsRunsToTheNext() {
		StratifiedMemoryPool pool = PoolSetup.CUDA_EXPANDABLE.pool(this.backend, "device", (config) -> config);
		pool.acquire(8 * MIB).close();
		this.refused.set("cuMemUnmap");

		assertThatExceptionOfType(CudaException.class).isThrownBy(() -> pool.trim(0))
			.satisfies((refusal) -> assertThat(refusal.call()).isEqualTo("cuMemUnmap"));
		assertThat(pool.statistics().reservedBytes()).isEqualTo(8 * MIB).isEqualTo(this.driver.usedBytes(0));
		assertThat(pool.trim(0)).isEqualTo(8 * MIB);
		assertThat(this.driver.usedBytes(0)).isZero();
		pool.close();
	}

}
