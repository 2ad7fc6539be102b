package io.gpumem.sample;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;

import io.gpumem.autoconfigure.GpumemPools;
import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.CudaDriver;
import io.gpumem.sample.kernels.CudaKernels;
import io.gpumem.sample.kernels.FakeCudaKernels;
import io.gpumem.sample.kernels.Kernels;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's HTTP contract ({@link SampleContract}) with {@code gpumem.backend=cuda} over the fake
 * driver: the PTX module loaded, every kernel launched with its arguments on the request's stream, the
 * stream work run as late as CUDA allows, against the same references as on the host backend.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=cuda", "sample.max-elements=300000" })
class SampleServiceOnFakeCudaTest extends SampleContractTests {

	@Autowired
	private GpumemPools pools;

	@Autowired
	private GpuBackend backend;

	@Autowired
	private Kernels kernels;

	@Test
	void theServiceRunsThePtxKernelsOnTheCudaBackend() {
		assertThat(this.backend).isInstanceOf(CudaBackend.class);
		assertThat(this.kernels).isInstanceOf(CudaKernels.class);
		assertThat(contract().backend()).isEqualTo("cuda");
	}

	@Test
	void eightConcurrentClientsAllGetRightAnswersAndNothingStaysInUse() {
		SampleContract contract = contract();
		contract.concurrentClients(8, 15);
		contract.reductions();
		contract.nothingLeftInUse();
		assertThat(this.pools.asMap().get("device").statistics().hits()).isPositive();
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class FakeCuda {

		@Bean
		CudaDriver fakeCudaDriver() {
			return FakeCudaKernels.driver(512L << 20);
		}

	}

}
