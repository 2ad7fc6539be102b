package io.gpumem.sample;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample in a pod HAMi gives 300 MiB of a 1 GiB device: the limit, its source and the budget read once at
 * startup, and shown by the endpoint and the meter.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=host", "gpumem.host.capacity=1GB", "CUDA_DEVICE_MEMORY_LIMIT_0=300m" })
@AutoConfigureRestTestClient
@ExtendWith(OutputCaptureExtension.class)
class DeviceLimitHttpTest {

	@Autowired
	private RestTestClient client;

	@Test
	void theLimitHamiSetsIsReadLoggedAndShown(CapturedOutput output) {
		this.client.get()
			.uri("/actuator/gpumem")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.device.totalBytes")
			.isEqualTo(1073741824)
			.jsonPath("$.device.limitBytes")
			.isEqualTo(314572800)
			.jsonPath("$.device.limitSource")
			.isEqualTo("CUDA_DEVICE_MEMORY_LIMIT_0 (HAMi)")
			.jsonPath("$.devices[0].limitBytes")
			.isEqualTo(314572800);
		assertThat(output).containsOnlyOnce("Device 0: limit 300.00 MiB from CUDA_DEVICE_MEMORY_LIMIT_0 (HAMi; the card "
				+ "has 1.00 GiB); memory-fraction 0.9: budget 270.00 MiB");
		this.client.get()
			.uri("/actuator/prometheus")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.value((scrape) -> assertThat(scrape).contains(
					"gpumem_device_limit_bytes{device=\"0\",source=\"CUDA_DEVICE_MEMORY_LIMIT_0 (HAMi)\"} 3.145728E8",
					"gpumem_device_memory_budget_bytes{device=\"0\"} 2.8311552E8"));
	}

}
