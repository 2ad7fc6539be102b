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

/**
 * What a user sees when gpumem's configuration stops startup: Boot's failure analysis naming the property
 * as it is written, its value, the file and line that set it, and the rule, not a bare stack trace.
 */
@ExtendWith(OutputCaptureExtension.class)
class StartupFailureAnalysisTest {

	@Test
	void aFractionOutOfRangeIsShownWhereItWasSet(CapturedOutput output) {
		startWithProfile("fraction");
		assertThat(output).contains("APPLICATION FAILED TO START",
				"Invalid value '1.5' for configuration property 'gpumem.memory-fraction' (originating from "
						+ "'class path resource [failure-analysis.yml] - 8:20')",
				"must lie in (0, 1]", "Review the value of the property");
		assertThat(output).doesNotContain("memoryFraction");
	}

	@Test
	void thresholdsOutOfOrderNameTheThresholdThatBreaksTheOrder(CapturedOutput output) {
		startWithProfile("thresholds");
		assertThat(output).contains(
				"Invalid value '0.7' for configuration property 'gpumem.pressure.thresholds.warning' (originating from "
						+ "'class path resource [failure-analysis.yml] - 15:16')",
				"must be above elevated (0.8); thresholds must satisfy 0 < elevated < warning < critical <= 1");
		assertThat(output).doesNotContain("Thresholds@");
	}

	@Test
	void aWarmUpThatIsNotASizeClassNamesItsMapEntry(CapturedOutput output) {
		startWithProfile("warm");
		assertThat(output).contains(
				"Invalid value '5' for configuration property 'gpumem.device-pool.warm.3kb' (originating from "
						+ "'class path resource [failure-analysis.yml] - 22:12')",
				"names 3072 bytes, which is not a size class of pool 'device'");
	}

	@Test
	void aValueSetInCodeIsShownWithoutAnOrigin(CapturedOutput output) {
		start("gpumem.host.capacity=-1GB");
		assertThat(output).contains("Invalid value '-1GB' for configuration property 'gpumem.host.capacity'",
				"must be positive", "Action:");
	}

	@Test
	void anAllocatorThatDoesNotExistListsTheOnesThatDo(CapturedOutput output) {
		start("gpumem.device-pool.allocator=cuda-sync");
		assertThat(output).contains("APPLICATION FAILED TO START", "gpumem.device-pool.allocator", "cuda-sync",
				"The following values are valid:", "ARENA", "CUDA_ASYNC");
	}

	@Test
	void aMisspeltPoolToRefuseListsThePools(CapturedOutput output) {
		start("gpumem.fault-injection.probability=1", "gpumem.fault-injection.pools=devise");
		assertThat(output).contains("APPLICATION FAILED TO START", "gpumem.fault-injection.pools", "devise",
				"The following values are valid:", "DEVICE", "PINNED", "UNIFIED");
	}

	@Test
	void aMalformedDeviceMemoryLimitNamesTheVariableItsValueAndTheFormItTakes(CapturedOutput output) {
		start("CUDA_DEVICE_MEMORY_LIMIT_0=lots");
		assertThat(output).contains("APPLICATION FAILED TO START",
				"gpumem could not read the device memory limit that CUDA_DEVICE_MEMORY_LIMIT_0 sets: its value is "
						+ "'lots', and it must be a number of bytes, or a number with k, m or g (300m, 4g).",
				"Action:", "Set CUDA_DEVICE_MEMORY_LIMIT_0 to a number of bytes");
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

	private static void startWithProfile(String profile) {
		start("spring.config.name=failure-analysis", "spring.profiles.active=" + profile);
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
