package io.gpumem.autoconfigure.endpoint;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.client.RestTestClient;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.device.GpumemDevices;
import io.gpumem.memory.GpuDeviceFailedException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Two emulated devices, the primary failed for good at its first acquire: only its parts stop, its health is
 * DOWN and the application's liveness BROKEN, while the other device serves and is UP.
 */
@SpringBootTest(classes = EndpointTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=host", "gpumem.host.capacity=64MB", "gpumem.host.devices=2",
				"gpumem.devices=all", "gpumem.fault-injection.device-fault-after=0",
				"management.endpoints.web.exposure.include=gpumem,health",
				"management.endpoint.gpumem.access=unrestricted", "management.endpoint.health.show-details=always",
				"management.endpoint.health.probes.enabled=true" })
@AutoConfigureRestTestClient
class DeviceFaultDevicesHttpTest {

	@Autowired
	private RestTestClient client;

	@Autowired
	private GpumemDevices devices;

	@Test
	void onlyTheFailedDeviceStopsAndTheOtherKeepsServing() {
		assertThatExceptionOfType(GpuDeviceFailedException.class)
			.isThrownBy(() -> this.devices.primary().devicePool().acquire(1 << 20));
		assertThat(this.devices.leastLoaded().ordinal()).isEqualTo(1);
		try (GpuBuffer served = this.devices.leastLoaded().devicePool().acquire(8 << 20)) {
			served.fill((byte) 1);
			this.client.get()
				.uri("/actuator/gpumem")
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.device.failure").value((String failure) -> assertThat(failure)
					.contains("device 0 (host memory emulating a device) failed for good with CUDA_ERROR_ILLEGAL_ADDRESS"))
				.jsonPath("$.devices[0].failure").isNotEmpty()
				.jsonPath("$.devices[1].failure").doesNotExist()
				.jsonPath("$.pools['device1.device'].inUseBytes").isEqualTo(8 * 1024 * 1024);
		}
		this.client.get()
			.uri("/actuator/health/gpumem")
			.exchange()
			.expectStatus()
			.isEqualTo(503)
			.expectBody()
			.jsonPath("$.status").isEqualTo("DOWN")
			.jsonPath("$.components.device0.status").isEqualTo("DOWN")
			.jsonPath("$.components.device0.details.error").isEqualTo("CUDA_ERROR_ILLEGAL_ADDRESS (700)")
			.jsonPath("$.components.device1.status").isEqualTo("UP");
		this.client.get().uri("/actuator/health/liveness").exchange().expectStatus().isEqualTo(503);
		this.client.post()
			.uri("/actuator/gpumem/device1.device")
			.contentType(MediaType.APPLICATION_JSON)
			.body("{}")
			.exchange()
			.expectStatus()
			.isOk();
	}

}
