package io.gpumem.sample;

import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.client.RestTestClient;

import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThat;

@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "gpumem.backend=host")
@AutoConfigureRestTestClient
class SampleApplicationTest {

	@Autowired
	private RestTestClient client;

	@Autowired
	private StratifiedMemoryPool pool;

	@Test
	void addsVectorsOnPooledBuffersAndReusesThem() {
		for (int i = 0; i < 3; i++) {
			Map<String, float[]> answer = this.client.post()
				.uri("/api/vectors/add")
				.contentType(MediaType.APPLICATION_JSON)
				.body("{\"a\":[1.5,2,3],\"b\":[0.25,-2,10]}")
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody(new ParameterizedTypeReference<Map<String, float[]>>() {
				})
				.returnResult()
				.getResponseBody();
			assertThat(answer.get("result")).containsExactly(1.75f, 0f, 13f);
		}
		assertThat(this.pool.statistics().hits()).isGreaterThanOrEqualTo(4);
		assertThat(this.pool.statistics().inUseBuffers()).isZero();
	}

	@Test
	void mismatchedLengthsAnswer400NamingTheProblem() {
		this.client.post()
			.uri("/api/vectors/add")
			.contentType(MediaType.APPLICATION_JSON)
			.body("{\"a\":[1,2],\"b\":[1]}")
			.exchange()
			.expectStatus()
			.isBadRequest()
			.expectBody()
			.jsonPath("$.error")
			.isEqualTo("a and b must be non-empty and of equal length: a has 2 elements, b has 1");
	}

	@Test
	void showsThePoolsOnTheActuatorEndpointAndGpumemInReadiness() {
		this.client.get()
			.uri("/actuator/gpumem")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.backend")
			.isEqualTo("host")
			.jsonPath("$.device.totalBytes")
			.isEqualTo(1L << 30)
			.jsonPath("$.pools.device.cachedBuffers")
			.isNumber();
		this.client.get()
			.uri("/actuator/health/readiness")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.components.gpumem.status")
			.isEqualTo("UP");
	}

}
