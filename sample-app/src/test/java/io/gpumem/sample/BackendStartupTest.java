package io.gpumem.sample;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaProbe;
import io.gpumem.cuda.CudaProbeResult;
import io.gpumem.sample.vectors.VectorService;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/** What a user sees at startup on a machine without a usable CUDA device. */
@ExtendWith(OutputCaptureExtension.class)
class BackendStartupTest {

	private final CudaProbeResult probe = CudaProbe.probe(0);

	@Test
	void autoStartsOnTheHostBackendAndLogsWhy(CapturedOutput output) {
		assumeFalse(this.probe.usable(), "a usable CUDA device is present");
		try (ConfigurableApplicationContext context = application().run("--gpumem.backend=auto")) {
			assertThat(context.getBean(GpuBackend.class).name()).isEqualTo("host");
		}
		assertThat(output).contains("gpumem uses the host backend", "no usable CUDA device: " + this.probe.reason());
	}

	@Test
	void cudaFailsWithTheProbesReasonAndNoNativeStackTrace(CapturedOutput output) {
		assumeFalse(this.probe.usable(), "a usable CUDA device is present");
		assertThatException().isThrownBy(() -> application().run("--gpumem.backend=cuda"));
		assertThat(output).contains("APPLICATION FAILED TO START", "gpumem.backend is 'cuda' but CUDA device 0",
				this.probe.reason(), "Action:");
		assertThat(output).doesNotContain("UnsatisfiedLinkError", "NoClassDefFoundError");
	}

	@Test
	void withGpumemDisabledTheServiceStartsWithoutItsBeans() {
		try (ConfigurableApplicationContext context = application().run("--gpumem.enabled=false")) {
			assertThat(context.getBeansOfType(GpuBackend.class)).isEmpty();
			assertThat(context.getBeansOfType(VectorService.class)).isEmpty();
		}
	}

	private static SpringApplicationBuilder application() {
		return new SpringApplicationBuilder(SampleApplication.class).web(WebApplicationType.NONE);
	}

}
