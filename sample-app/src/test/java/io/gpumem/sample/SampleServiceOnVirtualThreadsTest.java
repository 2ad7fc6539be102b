package io.gpumem.sample;

import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.core.task.AsyncTaskExecutor;

import io.gpumem.autoconfigure.GpumemPools;
import io.gpumem.cuda.CudaDriver;
import io.gpumem.sample.kernels.FakeCudaKernels;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's HTTP contract ({@link SampleContract}) with {@code spring.threads.virtual.enabled=true} over the fake
 * CUDA driver, whose work runs as it is polled: Tomcat serves each request and the task executor runs its GPU work on
 * a virtual thread of its own, whose waits for streams and events park; claims, admission, scopes and the endpoint
 * work as on platform threads.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=cuda", "sample.max-elements=300000",
				"spring.threads.virtual.enabled=true" })
@EnabledForJreRange(min = JRE.JAVA_21, disabledReason = "virtual threads came in Java 21")
class SampleServiceOnVirtualThreadsTest extends SampleContractTests {

	@Autowired
	@Qualifier("applicationTaskExecutor")
	private AsyncTaskExecutor executor;

	@Autowired
	private GpumemPools pools;

	@Test
	void theRequestsGpuWorkRunsOnVirtualThreads() throws Exception {
		Future<Boolean> virtual = this.executor
			.submit(() -> (Boolean) Thread.class.getMethod("isVirtual").invoke(Thread.currentThread()));
		assertThat(virtual.get()).isTrue();
	}

	@Test
	void sixteenConcurrentClientsAllGetRightAnswersAndNothingStaysInUse() {
		SampleContract contract = contract();
		contract.concurrentClients(16, 10);
		contract.reductions();
		contract.nothingLeftInUse();
		assertThat(this.pools.asMap().get("device").statistics().hits()).isPositive();
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class PolledFakeCuda {

		/** The sample's fake kernels on a fake GPU that gets to its work while virtual threads poll it. */
		@Bean
		CudaDriver fakeCudaDriver() {
			return FakeCudaKernels.driver(512L << 20).progressingWhenPolled();
		}

	}

}
