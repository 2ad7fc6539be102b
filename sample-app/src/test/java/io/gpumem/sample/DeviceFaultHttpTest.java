package io.gpumem.sample;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A device that fails for good, rehearsed with {@code gpumem.fault-injection.device-fault-after}: the service
 * answers 200 before the fault and 503 naming it after, never 500, and tells its liveness probe to restart it.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=host", "gpumem.host.capacity=64MB",
				"gpumem.fault-injection.device-fault-after=10" })
@AutoConfigureRestTestClient
class DeviceFaultHttpTest {

	@Autowired
	private RestTestClient client;

	@Test
	void theServiceAnswers200BeforeTheFault503NamingItAfterAndItsLivenessIsBroken() {
		this.client.get().uri("/actuator/health/liveness").exchange().expectStatus().isOk();
		List<Integer> statuses = new ArrayList<>();
		List<String> errors = new ArrayList<>();
		for (int i = 0; i < 12; i++) {
			this.client.post()
				.uri("/api/vectors/add")
				.contentType(MediaType.APPLICATION_JSON)
				.body("{\"a\":[1,2],\"b\":[3,4]}")
				.exchange()
				.expectBody(String.class)
				.consumeWith((answer) -> {
					statuses.add(answer.getStatus().value());
					errors.add(answer.getResponseBody());
				});
		}
		int firstFailure = statuses.indexOf(503);
		assertThat(firstFailure).as("the fault comes within ten acquires: %s", statuses).isBetween(1, 10);
		assertThat(statuses.subList(0, firstFailure)).containsOnly(200);
		assertThat(statuses.subList(firstFailure, statuses.size())).as("never 500").containsOnly(503);
		assertThat(errors.subList(firstFailure, errors.size()))
			.allSatisfy((error) -> assertThat(error).contains("failed for good with CUDA_ERROR_ILLEGAL_ADDRESS (700)"));
		this.client.get().uri("/actuator/health/liveness").exchange().expectStatus().isEqualTo(503);
		this.client.get()
			.uri("/actuator/health")
			.exchange()
			.expectStatus()
			.isEqualTo(503)
			.expectBody()
			.jsonPath("$.components.gpumem.status")
			.isEqualTo("DOWN");
		this.client.get()
			.uri("/actuator/gpumem")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.device.failure")
			.value((String failure) -> assertThat(failure).contains("CUDA_ERROR_ILLEGAL_ADDRESS"));
		this.client.get()
			.uri("/actuator/prometheus")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.value((scrape) -> assertThat(scrape).contains("gpumem_device_failures_total{device=\"0\"} 1.0"));
	}

}
