package io.gpumem.autoconfigure.endpoint;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.client.RestTestClient;

import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.SleepStatus;
import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThat;

/** A pool put to sleep and woken over HTTP, on expandable segments of the host backend. */
@SpringBootTest(classes = EndpointTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=host", "gpumem.host.capacity=256MB", "gpumem.device-pool.segments=expandable",
				"management.endpoints.web.exposure.include=gpumem",
				"management.endpoint.gpumem.access=unrestricted" })
@AutoConfigureRestTestClient
class PoolSleepHttpTest {

	private static final long GRANULE = 2L << 20;

	@Autowired
	private RestTestClient client;

	@Autowired
	@Qualifier("gpumemDevicePool")
	private StratifiedMemoryPool devicePool;

	private final List<PooledBuffer> lent = new ArrayList<>();

	@AfterEach
	void wakeAndClose() {
		this.devicePool.wake();
		this.lent.forEach(PooledBuffer::close);
	}

	@Test
	void anOffloadingSleepReleasesTheLentMemoryAndAWakeBringsItBack() {
		byte[] pattern = lend(5 * GRANULE + 1000);
		this.client.post()
			.uri("/actuator/gpumem/device/sleep")
			.contentType(MediaType.APPLICATION_JSON)
			.body("{\"mode\": \"offload\"}")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.mode").isEqualTo("OFFLOAD")
			.jsonPath("$.offloadedBytes").isEqualTo(6 * GRANULE)
			.jsonPath("$.lentBytes").isEqualTo(5 * GRANULE + 1024);
		assertThat(this.devicePool.reservedBytes()).isLessThanOrEqualTo(GRANULE);
		this.client.get()
			.uri("/actuator/gpumem/device")
			.exchange()
			.expectBody()
			.jsonPath("$.sleep.state").isEqualTo("ASLEEP")
			.jsonPath("$.sleep.lastSleep.offloadedBytes").isEqualTo(6 * GRANULE);

		this.client.post()
			.uri("/actuator/gpumem/device/wake")
			.contentType(MediaType.APPLICATION_JSON)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.restoredBytes").isEqualTo(6 * GRANULE)
			.jsonPath("$.cause").isEqualTo("a call");
		assertThat(this.devicePool.sleepStatus().state()).isEqualTo(SleepStatus.State.AWAKE);
		byte[] back = new byte[pattern.length];
		this.lent.get(0).copyTo(back);
		assertThat(back).isEqualTo(pattern);
	}

	@Test
	void aSleepWithoutABodyOffloadsAndADiscardingOneOffloadsNothing() {
		lend(GRANULE);
		post("/actuator/gpumem/device/sleep").expectStatus().isOk().expectBody()
			.jsonPath("$.mode").isEqualTo("OFFLOAD");
		this.devicePool.wake();
		this.client.post()
			.uri("/actuator/gpumem/device/sleep")
			.contentType(MediaType.APPLICATION_JSON)
			.body("{\"mode\": \"discard\"}")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.mode").isEqualTo("DISCARD")
			.jsonPath("$.offloadedBytes").isEqualTo(0);
	}

	@Test
	void anotherModeIsABadRequestAndTheReductionCacheOrAnUnknownPoolOrActionCannotSleep() {
		this.client.post()
			.uri("/actuator/gpumem/device/sleep")
			.contentType(MediaType.APPLICATION_JSON)
			.body("{\"mode\": \"nap\"}")
			.exchange()
			.expectStatus()
			.isBadRequest();
		assertThat(this.devicePool.sleepStatus().state()).isEqualTo(SleepStatus.State.AWAKE);
		post("/actuator/gpumem/reduction/sleep").expectStatus().isBadRequest();
		post("/actuator/gpumem/nope/sleep").expectStatus().isNotFound();
		post("/actuator/gpumem/device/nap").expectStatus().isNotFound();
	}

	/** A POST without a body: actuator's write operations ask for a JSON content type all the same. */
	private RestTestClient.ResponseSpec post(String uri) {
		return this.client.post().uri(uri).contentType(MediaType.APPLICATION_JSON).exchange();
	}

	private byte[] lend(long bytes) {
		PooledBuffer buffer = this.devicePool.acquire(bytes);
		byte[] pattern = new byte[(int) bytes];
		for (int i = 0; i < pattern.length; i++) {
			pattern[i] = (byte) (i * 31 + 7);
		}
		buffer.copyFrom(pattern);
		this.lent.add(buffer);
		return pattern;
	}

}
