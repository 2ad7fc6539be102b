package io.gpumem.autoconfigure.endpoint;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.client.RestTestClient;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.device.GpumemDevices;

/** {@code /actuator/gpumem} and health with two emulated devices: every device listed, its pools by name. */
@SpringBootTest(classes = EndpointTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=host", "gpumem.host.capacity=64MB", "gpumem.host.devices=2",
				"gpumem.devices=all", "management.endpoints.web.exposure.include=gpumem,health",
				"management.endpoint.gpumem.access=unrestricted", "management.endpoint.health.show-details=always" })
@AutoConfigureRestTestClient
class GpumemEndpointDevicesHttpTest {

	@Autowired
	private RestTestClient client;

	@Autowired
	private GpumemDevices devices;

	@Test
	void listsEveryDeviceWithItsLoadPressureAndPools() {
		try (GpuBuffer lent = this.devices.get(1).devicePool().acquire(8 << 20)) {
			this.client.get()
				.uri("/actuator/gpumem")
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.device.id").isEqualTo(0)
				.jsonPath("$.devices.length()").isEqualTo(2)
				.jsonPath("$.devices[0].id").isEqualTo(0)
				.jsonPath("$.devices[0].load").isEqualTo(0.0)
				.jsonPath("$.devices[0].pools").isEqualTo(List.of("device", "pinned", "reduction"))
				.jsonPath("$.devices[1].id").isEqualTo(1)
				.jsonPath("$.devices[1].totalBytes").isEqualTo(64 * 1024 * 1024)
				.jsonPath("$.devices[1].pressure").isEqualTo("NORMAL")
				.jsonPath("$.devices[1].pools[0]").isEqualTo("device1.device")
				.jsonPath("$.pools['device1.device'].inUseBytes").isEqualTo(8 * 1024 * 1024);
		}
	}

	@Test
	void readsAndTrimsAnotherDevicesPoolByItsName() {
		this.devices.get(1).devicePool().acquire(1 << 20).close();
		this.client.get()
			.uri("/actuator/gpumem/device1.device")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.name").isEqualTo("device1.device")
			.jsonPath("$.cachedBytes").isNumber();
		this.client.post()
			.uri("/actuator/gpumem/device1.device")
			.contentType(MediaType.APPLICATION_JSON)
			.body("{\"keepBytes\":0}")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.pools['device1.device'].cachedBytes").isEqualTo(0);
	}

	@Test
	void healthHasAnIndicatorPerDevice() {
		this.client.get()
			.uri("/actuator/health/gpumem/device1")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.status").isEqualTo("UP")
			.jsonPath("$.details.totalBytes").isEqualTo(64 * 1024 * 1024);
		this.client.get()
			.uri("/actuator/health/gpumem")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.components.device0.status").isEqualTo("UP")
			.jsonPath("$.components.device1.status").isEqualTo("UP");
	}

}
