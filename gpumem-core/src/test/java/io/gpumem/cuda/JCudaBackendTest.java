package io.gpumem.cuda;

import jcuda.driver.CUdeviceptr;
import org.junit.jupiter.api.Tag;

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
		DeviceFaultScenario.runInJvmOfItsOwn(JvmOfItsOwn.plain());
	}

	@Override
	protected Class<?> devicePointerType() {
		return CUdeviceptr.class;
	}

}
