package io.gpumem.device;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.gpumem.backend.BackendType;
import io.gpumem.cuda.CudaProbe;
import io.gpumem.cuda.CudaProbeResult;
import io.gpumem.cuda.CudaUnavailableException;
import io.gpumem.host.HostBackend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Backend selection through the real probe, on whatever machine the tests run; tagged {@code gpu}, so the
 * GPU verification runs it on the GPU machine too.
 */
@Tag("gpu")
class BackendSelectionTest {

	private static final long CAPACITY = 64L << 20;

	private final CudaProbeResult probe = CudaProbe.probe(0);

	@Test
	void hostIsChosenWithoutProbing() {
		BackendSelection selection = BackendSelection.select(BackendType.HOST, 0, CAPACITY);
		assertThat(selection.backend()).isInstanceOf(HostBackend.class);
		assertThat(selection.probe()).isNull();
		assertThat(selection.reason()).contains("configured", "64.00 MiB");
	}

	@Test
	void autoWithoutAUsableDeviceChoosesTheHostBackendAndSaysWhy() {
		assumeFalse(this.probe.usable(), "a usable CUDA device is present");
		BackendSelection selection = BackendSelection.select(BackendType.AUTO, 0, CAPACITY);
		assertThat(selection.backend().name()).isEqualTo("host");
		assertThat(selection.reason()).startsWith("no usable CUDA device: ").contains(this.probe.reason());
		assertThat(selection.backend().memoryInfo().totalBytes()).isEqualTo(CAPACITY);
	}

	@Test
	void cudaWithoutAUsableDeviceFailsWithTheProbesReasonAndNoNativeError() {
		assumeFalse(this.probe.usable(), "a usable CUDA device is present");
		assertThatExceptionOfType(CudaUnavailableException.class)
			.isThrownBy(() -> BackendSelection.select(BackendType.CUDA, 0, CAPACITY))
			.satisfies((ex) -> {
				assertThat(ex.getMessage()).contains(this.probe.reason());
				assertThat(ex.getCause()).isNull();
				assertThat(ex.probe().usable()).isFalse();
			});
	}

	@Test
	void withAUsableDeviceAutoAndCudaChooseCuda() {
		assumeTrue(this.probe.usable(), () -> "no usable CUDA device: " + this.probe.reason());
		for (BackendType type : new BackendType[] { BackendType.AUTO, BackendType.CUDA }) {
			BackendSelection selection = BackendSelection.select(type, 0, CAPACITY);
			try {
				assertThat(selection.backend().name()).isEqualTo("cuda");
				assertThat(selection.backend().deviceName()).isEqualTo(this.probe.deviceName());
			}
			finally {
				selection.backend().close();
			}
		}
	}

}
