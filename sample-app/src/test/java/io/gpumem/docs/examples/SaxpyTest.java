package io.gpumem.docs.examples;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;

import io.gpumem.cuda.CudaDriver;
import io.gpumem.pool.MemoryPool;
import io.gpumem.sample.SampleApplication;
import io.gpumem.sample.kernels.FakeCudaKernels;

import static org.assertj.core.api.Assertions.assertThat;

/** The README's service, as written there and wired by Spring, on the CUDA backend over the fake driver. */
@SpringBootTest(classes = { SampleApplication.class, Saxpy.class, SaxpyTest.FakeCuda.class },
		webEnvironment = SpringBootTest.WebEnvironment.NONE, properties = "gpumem.backend=cuda")
class SaxpyTest {

	@Autowired
	private Saxpy saxpy;

	@Autowired
	private MemoryPool pool;

	@Test
	void theReadmeServiceComputesOnPooledBuffersAndGivesThemBack() {
		long inUse = this.pool.statistics().inUseBytes();

		float[] y = { 10, 20, 30 };
		float[] result = this.saxpy.saxpy(2, new float[] { 1, 2, 3 }, y);

		assertThat(result).isSameAs(y).containsExactly(12, 24, 36);
		assertThat(this.pool.statistics().inUseBytes()).isEqualTo(inUse);
		assertThat(this.pool.statistics().requests()).isPositive();
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class FakeCuda {

		@Bean
		CudaDriver fakeCudaDriver() {
			return FakeCudaKernels.driver(64L << 20);
		}

	}

}
