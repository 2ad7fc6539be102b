package io.gpumem.cuda;

import java.lang.reflect.Proxy;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The probe never throws and says in words what it found, whatever the driver does. */
class CudaProbeTest {

	private final FakeCudaDriver driver = new FakeCudaDriver(8L << 30);

	@Test
	void aUsableDeviceIsDescribedWithItsFigures() {
		CudaProbeResult probe = CudaProbe.probe(0, () -> this.driver);
		assertThat(probe.usable()).isTrue();
		assertThat(probe.deviceName()).isEqualTo("Fake GPU 0");
		assertThat(probe.totalBytes()).isEqualTo(8L << 30);
		assertThat(probe.computeCapability()).isEqualTo(90);
		assertThat(probe.reason()).contains("Fake GPU 0", "compute capability 9.0", "8.00 GiB", "CUDA 12.8");
		assertThat(this.driver.retainedContexts()).as("the probe gives back what it retained").isZero();
	}

	@Test
	void aMissingDriverLibraryIsReportedNotThrown() {
		Supplier<CudaDriver> missing = () -> {
			throw new UnsatisfiedLinkError("libcuda.so.1: cannot open shared object file");
		};
		CudaProbeResult probe = CudaProbe.probe(0, missing);
		assertThat(probe.usable()).isFalse();
		assertThat(probe.reason()).contains("libcuda.so.1");
	}

	@Test
	void aDriverOlderThanJCudaNeedsIsReportedWithBothVersions() {
		this.driver.driverVersion = 11040;
		CudaProbeResult probe = CudaProbe.probe(0, () -> this.driver);
		assertThat(probe.usable()).isFalse();
		assertThat(probe.reason()).contains("CUDA 11.4", "CUDA 12.0", "update the NVIDIA driver");
	}

	@Test
	void anInsufficientDriverAtInitIsReportedAsTooOld() {
		this.driver.initResult = CudaException.INSUFFICIENT_DRIVER;
		assertThat(CudaProbe.probe(0, () -> this.driver).reason()).contains("update the NVIDIA driver");
	}

	@Test
	void noDeviceIsReported() {
		this.driver.initResult = CudaException.NO_DEVICE;
		assertThat(CudaProbe.probe(0, () -> this.driver).reason()).contains("no CUDA device");
		this.driver.initResult = 0;
		this.driver.deviceCount = 0;
		assertThat(CudaProbe.probe(0, () -> this.driver).reason()).contains("no CUDA device");
	}

	@Test
	void aDeviceOrdinalBeyondTheCountIsReported() {
		this.driver.deviceCount = 2;
		CudaProbeResult probe = CudaProbe.probe(3, () -> this.driver);
		assertThat(probe.usable()).isFalse();
		assertThat(probe.reason()).contains("device 3", "2 device(s)");
	}

	@Test
	void aContextThatCannotBeCreatedIsReported() {
		this.driver.retainResult = 999;
		CudaProbeResult probe = CudaProbe.probe(0, () -> this.driver);
		assertThat(probe.usable()).isFalse();
		assertThat(probe.reason()).contains("Fake GPU 0", "context", "CUDA_ERROR_999");
	}

	@Test
	void anythingElseThrownIsReportedToo() {
		CudaDriver exploding = (CudaDriver) Proxy.newProxyInstance(getClass().getClassLoader(),
				new Class<?>[] { CudaDriver.class }, (proxy, method, args) -> {
					throw new IllegalStateException("driver exploded");
				});
		CudaProbeResult probe = CudaProbe.probe(0, () -> exploding);
		assertThat(probe.usable()).isFalse();
		assertThat(probe.reason()).contains("probing the CUDA driver failed", "driver exploded");
	}

	@Test
	void onThisMachineTheRealProbeAnswersWithoutThrowing() {
		CudaProbeResult probe = CudaProbe.probe(0);
		assertThat(probe.reason()).isNotBlank();
		if (!probe.usable()) {
			assertThat(CudaProbe.probe(0).reason()).as("the first failure is remembered").isEqualTo(probe.reason());
		}
	}

}
