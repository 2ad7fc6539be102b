package io.gpumem.cuda;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import jcuda.driver.CUdeviceptr;
import org.junit.jupiter.api.Tag;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The shared scenarios on the real driver through JCuda. Where the probe finds no usable CUDA device,
 * each scenario is skipped with the probe's reason, so that the reason shows in the test report. Tagged
 * {@code gpu}: the GPU verification runs every test so tagged on the GPU machine.
 */
@Tag("gpu")
class JCudaBackendTest extends CudaScenarios {

	private static final CudaProbeResult PROBE = CudaProbe.probe(0);

	@Override
	protected CudaBackend openBackend() {
		assumeTrue(PROBE.usable(), () -> "no usable CUDA device: " + PROBE.reason());
		return CudaBackend.open(0);
	}

	/** In a JVM of its own: the fault leaves the device unusable for the rest of the process. */
	@Override
	protected void runDeviceFault() throws Exception {
		String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
		Path log = Files.createTempFile("device-fault", ".log");
		Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
				classPath, DeviceFaultScenario.class.getName())
			.redirectErrorStream(true)
			.redirectOutput(log.toFile())
			.start();
		boolean ended = process.waitFor(5, TimeUnit.MINUTES);
		if (!ended) {
			process.destroyForcibly();
		}
		String output = Files.readString(log);
		assertThat(ended).as(output).isTrue();
		assertThat(process.exitValue()).as(output).isZero();
		assertThat(output).contains("device fault scenario passed");
	}

	@Override
	protected Class<?> devicePointerType() {
		return CUdeviceptr.class;
	}

}
