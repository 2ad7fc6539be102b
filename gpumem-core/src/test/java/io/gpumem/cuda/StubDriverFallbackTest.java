package io.gpumem.cuda;

import java.util.Map;

import jcuda.driver.CUdevice_attribute;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.gpumem.backend.BackendType;
import io.gpumem.backend.VirtualMemory;
import io.gpumem.device.BackendSelection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Where the driver's virtual memory cannot be used, the probe says which call failed and why in one line, the
 * device pool cuts fixed segments, and the probe leaves nothing behind: a call refused, a device that reports no
 * virtual-memory management, a driver older than JCuda, a driver library without the entry points, JNA missing.
 */
@Tag(StubDriver.TAG)
class StubDriverFallbackTest {

	private StubDriver stub;

	private Map<String, Integer> heldBefore;

	@BeforeEach
	void noteWhatTheStubHolds() {
		this.stub = StubDriver.loaded();
		this.heldBefore = this.stub.holdings();
	}

	@AfterEach
	void takeBackEveryRefusal() {
		if (this.stub == null) {
			return;
		}
		this.stub.reset();
		assertThat(this.stub.holdings()).isEqualTo(this.heldBefore);
	}

	@ParameterizedTest
	@CsvSource({ "cuMemGetAllocationGranularity, 1, CUDA_ERROR_INVALID_VALUE",
			"cuMemAddressReserve, 2, CUDA_ERROR_OUT_OF_MEMORY", "cuMemCreate, 2, CUDA_ERROR_OUT_OF_MEMORY",
			"cuMemMap, 1, CUDA_ERROR_INVALID_VALUE", "cuMemSetAccess, 101, CUDA_ERROR_INVALID_DEVICE",
			"cuMemsetD8, 1, CUDA_ERROR_INVALID_VALUE" })
	void aRefusedCallOfTheProbeIsNamedAndTheDevicePoolCutsFixedSegments(String call, int code, String name) {
		this.stub.refuse(call, code);
		CudaBackend backend = CudaBackend.open(0);
		try {
			VirtualMemory virtualMemory = backend.virtualMemory();
			assertThat(virtualMemory.supported()).isFalse();
			assertThat(virtualMemory.reason()).startsWith("probing virtual memory on CUDA device 0 failed: ")
				.contains(call + " failed: " + name + " (" + code + ")")
				.doesNotContain("\n");
			assertThat(this.stub.holdings()).as("what the probe took, given back")
				.containsEntry("reserved", 0)
				.containsEntry("physical", 0)
				.containsEntry("mappings", 0);
			this.stub.accept(call);
			int mark = this.stub.calls().size();
			assertThat(VirtualMemoryFallback.poolKeepsBytes(backend, virtualMemory)).isTrue();
			assertThat(this.stub.callsSince(mark).names()).contains("cuMemAlloc").doesNotContain("cuMemCreate");
		}
		finally {
			backend.close();
		}
	}

	@Test
	void aDeviceThatReportsNoVirtualMemoryManagementIsNeverProbed() {
		this.stub.attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0);
		CudaBackend backend = CudaBackend.open(0);
		try {
			int mark = this.stub.calls().size();
			VirtualMemory virtualMemory = backend.virtualMemory();
			assertThat(virtualMemory.reason()).isEqualTo("CUDA device 0 does not report virtual memory management "
					+ "(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)");
			assertThat(this.stub.callsSince(mark).names()).doesNotContain("cuMemGetAllocationGranularity",
					"cuMemAddressReserve", "cuMemCreate");
			assertThat(VirtualMemoryFallback.poolKeepsBytes(backend, virtualMemory)).isTrue();
		}
		finally {
			backend.close();
		}
	}

	@Test
	void aDriverOlderThanJCudaIsRefusedBeforeAnyContextAndAutoTakesTheHostBackend() {
		this.stub.driverVersion(11080);
		String reason = "the NVIDIA driver supports CUDA 11.8 but JCuda needs CUDA 12.0 or newer: update the NVIDIA "
				+ "driver";
		assertThatExceptionOfType(CudaUnavailableException.class).isThrownBy(() -> CudaBackend.open(0))
			.withMessageEndingWith(reason);
		BackendSelection auto = BackendSelection.select(BackendType.AUTO, 0, 64L << 20);
		try {
			assertThat(auto.backend().name()).isEqualTo("host");
			assertThat(auto.reason()).contains(reason);
		}
		finally {
			auto.backend().close();
		}
		assertThat(this.stub.holdings()).containsEntry("contexts", 0);
	}

	/** A driver library without the entry points of physical memory, as one older than CUDA 11.2 or not NVIDIA's. */
	@Test
	void aDriverWithoutTheEntryPointsIsNamedAndNothingIsLeft() throws Exception {
		JvmOfItsOwn.Ended ended = JvmOfItsOwn.plain()
			.withOptions("-D" + StubDriver.DIRECTORY_PROPERTY + "=" + StubDriver.directory())
			.withEnvironment(Map.of("LD_LIBRARY_PATH", StubDriver.directory().resolve("no-virtual-memory").toString()))
			.run(VirtualMemoryFallback.class, "holdings");
		assertThat(ended.exitCode()).as(ended.output()).isZero();
		assertThat(ended.output()).contains("reason=probing virtual memory on CUDA device 0 failed: the CUDA driver "
				+ "library libcuda.so.1 has no cuMemGetAllocationGranularity, cuMemCreate, cuMemRelease, cuMemMap, which "
				+ "gpumem calls directly")
			.contains("pool keeps its bytes=true")
			.contains("stream-ordered pool=the CUDA driver library libcuda.so.1 has no cuMemGetAllocationGranularity")
			.containsPattern("held=\\{([a-zA-Z.]+=0, )*[a-zA-Z.]+=0}");
	}

	@Test
	void withoutJnaTheProbeSaysSoAndThePoolCutsFixedSegments() throws Exception {
		JvmOfItsOwn.Ended ended = JvmOfItsOwn.plain()
			.without((entry) -> entry.contains("net/java/dev/jna"))
			.run(VirtualMemoryFallback.class);
		assertThat(ended.exitCode()).as(ended.output()).isZero();
		assertThat(ended.output()).contains("reason=probing virtual memory on CUDA device 0 failed: gpumem calls "
				+ "cuMemGetAllocationGranularity, cuMemCreate, cuMemRelease, cuMemMap, cuMemSetAccess, cuMemPoolCreate, "
				+ "cuMemAllocFromPoolAsync, cuMemPoolTrimTo, cuMemPoolDestroy through JNA, which is not on the class path "
				+ "(net.java.dev.jna:jna)")
			.contains("pool keeps its bytes=true")
			.contains("stream-ordered pool=gpumem calls cuMemGetAllocationGranularity");
	}

}
