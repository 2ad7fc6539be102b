package io.gpumem.sample;

import java.net.URI;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.client.RestTestClient;

import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's device pool put to sleep over HTTP between requests, on the host backend's expandable segments, with
 * the endpoint's writes opened as docs/endpoint.md says.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=host", "sample.max-elements=300000",
				"management.endpoint.gpumem.access=unrestricted" })
@AutoConfigureRestTestClient
class SleepHttpTest {

	private static final long GRANULE = 2L << 20;

	@LocalServerPort
	private int port;

	@Autowired
	private RestTestClient client;

	@Autowired
	@Qualifier("gpumemDevicePool")
	private StratifiedMemoryPool devicePool;

	@Test
	void aPoolAsleepBetweenRequestsHoldsAtMostAGranuleAndARequestWakesIt() {
		SampleContract contract = new SampleContract(URI.create("http://localhost:" + this.port), 67);
		contract.addAndSaxpy();
		contract.pageRankWithDanglingNodes();

		post("/actuator/gpumem/device/sleep", "{\"mode\": \"offload\"}").expectStatus().isOk();
		assertThat(this.devicePool.reservedBytes()).isLessThanOrEqualTo(GRANULE);
		assertThat(state()).isEqualTo("ASLEEP");
		this.client.get().uri("/actuator/health").exchange().expectStatus().isOk().expectBody()
			.jsonPath("$.status").isEqualTo("UP");

		contract.addAndSaxpy();
		assertThat(state()).isEqualTo("AWAKE");
		this.client.get().uri("/actuator/gpumem/device").exchange().expectBody()
			.jsonPath("$.sleep.lastWake.cause").isEqualTo("an acquire");

		post("/actuator/gpumem/device/sleep", "{\"mode\": \"discard\"}").expectStatus().isOk();
		post("/actuator/gpumem/device/wake", "").expectStatus().isOk();
		assertThat(state()).isEqualTo("AWAKE");
		contract.reductions();
		contract.reductions();
		contract.nothingLeftInUse();
	}

	@Test
	void aModeOfNapIsABadRequest() {
		post("/actuator/gpumem/device/sleep", "{\"mode\": \"nap\"}").expectStatus().isBadRequest().expectBody()
			.jsonPath("$.detail").isEqualTo("mode must be offload or discard, not 'nap'");
		assertThat(state()).isEqualTo("AWAKE");
	}

	private RestTestClient.ResponseSpec post(String uri, String body) {
		return this.client.post().uri(uri).contentType(MediaType.APPLICATION_JSON).body(body).exchange();
	}

	private String state() {
		return this.client.get().uri("/actuator/gpumem/device").exchange().expectStatus().isOk()
			.returnResult(String.class).getResponseBody().replaceAll("(?s).*\"sleep\":\\{\"state\":\"(\\w+)\".*", "$1");
	}

}
