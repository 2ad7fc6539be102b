package io.gpumem.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import io.gpumem.cuda.CudaProbe;
import io.gpumem.cuda.CudaProbeResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/** What a user sees when gpumem's configuration stops startup: a failure analysis, not a bare stack trace. */
@ExtendWith(OutputCaptureExtension.class)
class StartupFailureAnalysisTest {

	@Test
	void thresholdsOutOfOrder(CapturedOutput output) {
		start("gpumem.pressure.thresholds.elevated=0.8", "gpumem.pressure.thresholds.warning=0.7");
		assertThat(output).contains("APPLICATION FAILED TO START", "gpumem.pressure.thresholds",
				"must satisfy 0 < elevated < warning < critical <= 1, but elevated=0.8, warning=0.7, critical=0.9",
				"Value: \"{elevated=0.8, warning=0.7, critical=0.9}\"", "Action:");
		assertThat(output).doesNotContain("Thresholds@");
	}

	@Test
	void aNegativeHostCapacity(CapturedOutput output) {
		start("gpumem.host.capacity=-1GB");
		assertThat(output).contains("APPLICATION FAILED TO START", "gpumem.host.capacity", "must be a positive size",
				"Action:");
	}

	@Test
	void aWarmUpThatIsNotASizeClass(CapturedOutput output) {
		start("gpumem.device-pool.size-classes=1KB,4KB", "gpumem.device-pool.warm[3KB]=5");
		assertThat(output).contains("APPLICATION FAILED TO START", "gpumem.device-pool", "3072", "Action:");
	}

	@Test
	void cudaOnAMachineWithoutADevice(CapturedOutput output) {
		CudaProbeResult probe = CudaProbe.probe(0);
		assumeFalse(probe.usable(), "a usable CUDA device is present");
		start("gpumem.backend=cuda");
		assertThat(output).contains("APPLICATION FAILED TO START", "gpumem.backend is 'cuda' but CUDA device 0",
				probe.reason(), "Action:");
		assertThat(output).doesNotContain("UnsatisfiedLinkError");
	}

	private static void start(String... properties) {
		assertThatException().isThrownBy(() -> new SpringApplicationBuilder(Application.class)
			.web(WebApplicationType.NONE)
			.properties("gpumem.host.capacity=16MB")
			.properties(properties)
			.run());
	}

	@SpringBootConfiguration
	@ImportAutoConfiguration(GpumemAutoConfiguration.class)
	static class Application {

	}

}
