package io.gpumem.sample;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.client.RestTestClient;

import io.gpumem.allocator.MemoryBudget;
import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * MPS's 200 MiB beside HAMi's 300 MiB on a 1 GiB device: the smaller is the limit, and a request that needs more than
 * its budget is refused at once, with the limit and its source, before anything is tried on the device.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=host", "gpumem.host.capacity=1GB", "CUDA_DEVICE_MEMORY_LIMIT_0=300m",
				"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=200M" })
@AutoConfigureRestTestClient
class MpsDeviceLimitHttpTest {

	@Autowired
	private RestTestClient client;

	@Autowired
	private StratifiedMemoryPool devicePool;

	@Autowired
	private MemoryBudget budget;

	@Test
	void theSmallerLimitWinsAndARequestBeyondItIsRefusedAtOnce() {
		this.client.get()
			.uri("/actuator/gpumem")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.device.limitBytes")
			.isEqualTo(209715200)
			.jsonPath("$.device.limitSource")
			.isEqualTo("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT (MPS)");
		long reservedBefore = this.devicePool.reservedBytes();
		long drawnBefore = this.budget.usedBytes();
		this.client.post()
			.uri("/api/graphs/pagerank")
			.contentType(MediaType.APPLICATION_JSON)
			.body("{\"nodes\":8000000,\"edgesPerNode\":2,\"seed\":1,\"iterations\":5}")
			.exchange()
			.expectStatus()
			.isEqualTo(503)
			.expectBody()
			.jsonPath("$.error")
			.value((String error) -> assertThat(error).contains("Out of DEVICE memory", "Its limit is 180.00 MiB",
					"the budget is memory-fraction 0.9 of the limit of 200.00 MiB from "
							+ "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT (MPS)"));
		assertThat(this.budget.usedBytes()).as("nothing was tried on the device").isEqualTo(drawnBefore);
		assertThat(this.devicePool.reservedBytes()).isEqualTo(reservedBefore);
		this.client.post()
			.uri("/api/graphs/pagerank")
			.contentType(MediaType.APPLICATION_JSON)
			.body("{\"nodes\":1000,\"edgesPerNode\":4,\"seed\":1,\"iterations\":5}")
			.exchange()
			.expectStatus()
			.isOk();
	}

}
