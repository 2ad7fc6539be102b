package io.gpumem.autoconfigure.endpoint;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.client.RestTestClient;

@SpringBootTest(classes = EndpointTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=host", "gpumem.host.capacity=64MB",
				"management.endpoints.web.exposure.include=gpumem" })
@AutoConfigureRestTestClient
class GpumemEndpointReadOnlyHttpTest {

	@Autowired
	private RestTestClient client;

	@Test
	void byDefaultReadsWorkAndTrimsSleepsAndWakesAreMethodNotAllowed() {
		this.client.get().uri("/actuator/gpumem").exchange().expectStatus().isOk();
		this.client.post()
			.uri("/actuator/gpumem")
			.contentType(MediaType.APPLICATION_JSON)
			.body("{\"keepBytes\": 0}")
			.exchange()
			.expectStatus()
			.isEqualTo(405);
		this.client.post().uri("/actuator/gpumem/device").exchange().expectStatus().isEqualTo(405);
		this.client.post().uri("/actuator/gpumem/device/sleep").exchange().expectStatus().isEqualTo(405);
		this.client.post().uri("/actuator/gpumem/device/wake").exchange().expectStatus().isEqualTo(405);
		this.client.get().uri("/actuator/gpumem/device").exchange().expectBody().jsonPath("$.sleep.state")
			.isEqualTo("AWAKE");
	}

}
