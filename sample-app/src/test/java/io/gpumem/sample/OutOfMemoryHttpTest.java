package io.gpumem.sample;

import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.client.RestTestClient;

import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThat;

/** A request too large for the device answers 503 with the diagnostic, and the service goes on serving. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=host", "gpumem.host.capacity=8MB" })
@AutoConfigureRestTestClient
class OutOfMemoryHttpTest {

	@Autowired
	private RestTestClient client;

	@Autowired
	private StratifiedMemoryPool devicePool;

	@Test
	void outOfMemoryIs503WithTheDiagnosticAndTheServiceKeepsServing() {
		float[] large = new float[1_000_000];
		this.client.post()
			.uri("/api/vectors/add")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("a", large, "b", large))
			.exchange()
			.expectStatus()
			.isEqualTo(503)
			.expectBody()
			.jsonPath("$.error")
			.value((String error) -> assertThat(error).contains("Out of DEVICE memory", "tried to allocate",
					"total capacity of 8.00 MiB"));
		this.client.post()
			.uri("/api/vectors/add")
			.contentType(MediaType.APPLICATION_JSON)
			.body("{\"a\":[1,2],\"b\":[3,4]}")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.result[1]")
			.isEqualTo(6.0);
		assertThat(this.devicePool.statistics().inUseBuffers()).isZero();
		assertThat(this.devicePool.statistics().allocationFailures()).isEqualTo(1);
		this.client.get()
			.uri("/actuator/gpumem")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.pressure.outOfMemory.refusals")
			.value((Integer refusals) -> assertThat(refusals).as("a request beyond the device frees nothing").isZero())
			.jsonPath("$.pressure.outOfMemory.failures")
			.isEqualTo(1)
			.jsonPath("$.pressure.level")
			.value((String level) -> assertThat(level).as("a request larger than the device is not pressure")
				.isNotEqualTo("OUT_OF_MEMORY"))
			.jsonPath("$.admission.claimedBytes")
			.isEqualTo(0)
			.jsonPath("$.pressure.pinnedLevel")
			.isEqualTo("NORMAL");
		this.client.get()
			.uri("/actuator/prometheus")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.value((scrape) -> assertThat(scrape).contains("gpumem_pressure_oom_failures_total{device=\"0\"} 1.0",
					"gpumem_pressure_oom_refusals_total", "gpumem_pressure_oom_freed_bytes_total",
					"gpumem_pressure_level{device=\"0\",memory=\"pinned\"}",
					"gpumem_pressure_level{device=\"0\",memory=\"device\"}"));
	}

}
