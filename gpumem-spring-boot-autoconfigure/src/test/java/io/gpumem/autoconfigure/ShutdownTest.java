package io.gpumem.autoconfigure;

import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;

import io.gpumem.backend.GpuBackend;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.reduction.ReductionBufferCache;
import io.gpumem.reduction.ReductionOp;

import static org.assertj.core.api.Assertions.assertThat;

/** Closing the context closes the cache and pools before the backend, and reports what is still lent. */
class ShutdownTest {

	@Test
	void poolsCloseInOrderAndLentBuffersAreReported() {
		ApplicationContextRunner runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(GpumemAutoConfiguration.class))
			.withPropertyValues("gpumem.backend=host", "gpumem.host.capacity=16MB");
		StratifiedMemoryPool[] device = new StratifiedMemoryPool[1];
		GpuBackend[] backend = new GpuBackend[1];
		runner.run((context) -> {
			device[0] = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
			backend[0] = context.getBean(GpuBackend.class);
			device[0].acquire(4096).close();
			context.getBean(ReductionBufferCache.class).acquire(float.class, 4, ReductionOp.SUM).close();
			PooledBuffer forgotten = device[0].acquire(65536);
			assertThat(forgotten.isClosed()).isFalse();
			((ConfigurableApplicationContext) context).close();
			assertThat(device[0].isClosed()).isTrue();
			assertThat(device[0].statistics().inUseBuffers()).as("the pool still reports the lent buffer").isEqualTo(1);
			assertThat(backend[0].memoryInfo().usedBytes()).as("only the segment of the forgotten buffer is still held")
				.isEqualTo(2L << 20);
			forgotten.close();
			assertThat(backend[0].memoryInfo().usedBytes()).isZero();
		});
	}

}
