package io.gpumem.cuda;

import java.time.Duration;
import java.util.Map;

import jcuda.driver.CUdeviceptr;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The shared scenarios through JCuda's real natives and JNA on the stub driver, which keeps CUDA's rules on what it
 * receives: every buffer's bytes, the virtual-memory calls end to end, and nothing held once the pools close.
 */
@Tag(StubDriver.TAG)
class StubDriverBackendTest extends CudaScenarios {

	private static Map<String, Integer> heldBefore;

	/**
	 * Nothing is left behind: the pinned block whose view escaped ({@code pinnedMemoryUsedAfterFree...}) goes back,
	 * and with it the context it keeps retained, when the garbage collector finds the view unreachable.
	 */
	@AfterAll
	static void everythingGoesBack() {
		if (heldBefore == null) {
			return;
		}
		await().atMost(Duration.ofMinutes(1)).untilAsserted(() -> {
			System.gc();
			assertThat(StubDriver.loaded().holdings()).isEqualTo(heldBefore);
		});
	}

	/** Opens device 0 of the stub, noting before the first what the stub holds. */
	@Override
	protected CudaBackend openBackend() {
		StubDriver stub = StubDriver.loaded();
		if (heldBefore == null) {
			heldBefore = stub.holdings();
		}
		return CudaBackend.open(0);
	}

	/** In a JVM of its own, on a stub told that the kernel faults: the fault is sticky for the rest of the process. */
	@Override
	protected void runDeviceFault() throws Exception {
		DeviceFaultScenario.runInJvmOfItsOwn(JvmOfItsOwn.plain()
			.withEnvironment(Map.of("GPUMEM_STUB_FAULTING_KERNEL", DeviceFaultScenario.KERNEL)));
	}

	@Override
	protected Class<?> devicePointerType() {
		return CUdeviceptr.class;
	}

}
