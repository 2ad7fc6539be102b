package io.gpumem.sample;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;

import io.gpumem.autoconfigure.GpumemPools;
import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaAsyncAllocator;
import io.gpumem.cuda.CudaDriver;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.sample.kernels.FakeCudaKernels;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's HTTP contract ({@link SampleContract}) with the device pool over CUDA's stream-ordered
 * pool ({@code gpumem.device-pool.allocator=cuda-async}) on the fake driver: the buffers a request
 * allocates are ordered on its stream, and the answers are those of the arena.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=cuda", "gpumem.device-pool.allocator=cuda-async", "sample.max-elements=300000" })
class SampleServiceOnCudaAsyncTest extends SampleContractTests {

	@Autowired
	private GpumemPools pools;

	@Autowired
	private GpuBackend backend;

	@Test
	void requestsAllocateOnTheirOwnStreamsAndGiveEverythingBack() {
		SampleContract contract = contract();
		contract.concurrentClients(8, 15);
		contract.reductions();
		contract.nothingLeftInUse();
		CudaAsyncAllocator allocator = (CudaAsyncAllocator) this.backend.streamOrderedAllocator();
		StratifiedMemoryPool device = (StratifiedMemoryPool) this.pools.asMap().get("device");
		assertThat(device.allocator().streamOrdered()).isTrue();
		assertThat(allocator.streamOrderedAllocations()).as("blocks allocated on a request's stream").isPositive();
		assertThat(device.trim(0)).isPositive();
		assertThat(device.reservedBytes()).isZero();
		assertThat(this.pools.asMap().get("reduction").reservedBytes()).as("the reduction cache's, the device pool's")
			.isZero();
		assertThat(allocator.allocatedBytes()).isZero();
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class FakeCuda {

		@Bean
		CudaDriver fakeCudaDriver() {
			return FakeCudaKernels.driver(512L << 20);
		}

	}

}
