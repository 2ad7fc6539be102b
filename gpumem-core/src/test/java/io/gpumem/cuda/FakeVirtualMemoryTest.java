package io.gpumem.cuda;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static io.gpumem.cuda.FakeCudaDriver.GRANULARITY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The fake driver's virtual-memory calls keep CUDA's rules, each of which a fake that ignored it would let
 * pass: whole granules, access set before a copy or a kernel touches a mapping, whole mappings unmapped and
 * nothing mapped when a range is freed, a released handle alive while mapped, no memory for a reserved range.
 */
class FakeVirtualMemoryTest {

	private static final long CAPACITY = 64L << 20;

	private final FakeCudaDriver driver = new FakeCudaDriver(CAPACITY).kernel("fill",
			(launch) -> launch.memory(0).put(launch.intArgument(1), (byte) 1));

	@BeforeEach
	void bind() {
		this.driver.init();
		this.driver.setCurrentContext(this.driver.retainPrimaryContext(0));
	}

	@Test
	void sizesAndOffsetsMustBeWholeGranules() {
		refused(() -> this.driver.reserveAddresses(GRANULARITY + 4096));
		refused(() -> this.driver.createPhysical(0, 4096));
		Object base = this.driver.reserveAddresses(2 * GRANULARITY);
		Object handle = this.driver.createPhysical(0, GRANULARITY);
		refused(() -> this.driver.map(this.driver.offset(base, 4096), GRANULARITY, handle));
		this.driver.map(base, GRANULARITY, handle);
		refused(() -> this.driver.unmap(base, 4096));
		refused(() -> this.driver.setAccess(base, GRANULARITY / 2, 0));
		this.driver.unmap(base, GRANULARITY);
	}

	@Test
	void aMappingIsUsableOnlyOnceItsAccessIsSet() {
		Object base = mapped(1);
		refused(() -> this.driver.copyArrayToDevice(base, new byte[16], 0, 16));
		refused(() -> this.driver.memsetD8(base, (byte) 1, 16, null));
		this.driver.setAccess(base, GRANULARITY, 0);
		this.driver.copyArrayToDevice(base, "ready".getBytes(StandardCharsets.US_ASCII), 0, 5);
		byte[] back = new byte[5];
		this.driver.copyDeviceToArray(back, 0, base, 5);
		assertThat(new String(back, StandardCharsets.US_ASCII)).isEqualTo("ready");
	}

	@Test
	void aKernelTouchingAMappingWithoutAccessFaultsTheContext() {
		Object base = mapped(1);
		Object fill = this.driver.function(this.driver.loadModule(ptx()), "fill");
		this.driver.launchKernel(fill, 1, 1, 0, null, new Object[] { base, 0 });
		assertThatExceptionOfType(CudaException.class).isThrownBy(() -> this.driver.synchronizeStream(null))
			.satisfies((ex) -> assertThat(ex.code()).isEqualTo(FakeCudaDriver.ILLEGAL_ADDRESS));
	}

	@Test
	void aKernelReachesAcrossMappingsWithAccessButNotPastThem() {
		Object base = mapped(2);
		this.driver.setAccess(base, 2 * GRANULARITY, 0);
		Object fill = this.driver.function(this.driver.loadModule(ptx()), "fill");
		this.driver.launchKernel(fill, 1, 1, 0, null, new Object[] { base, (int) GRANULARITY + 1 });
		this.driver.synchronizeStream(null);
		byte[] back = new byte[1];
		this.driver.copyDeviceToArray(back, 0, this.driver.offset(base, GRANULARITY + 1), 1);
		assertThat(back[0]).isEqualTo((byte) 1);
		this.driver.launchKernel(fill, 1, 1, 0, null, new Object[] { base, (int) (2 * GRANULARITY) });
		assertThatExceptionOfType(CudaException.class).isThrownBy(() -> this.driver.synchronizeStream(null))
			.satisfies((ex) -> assertThat(ex.code()).as("the third granule is reserved, not mapped")
				.isEqualTo(FakeCudaDriver.ILLEGAL_ADDRESS));
	}

	@Test
	void onlyWholeMappingsUnmapAndARangeIsFreedOnlyWhenNothingIsMapped() {
		Object base = mapped(2);
		refused(() -> this.driver.unmap(base, 3 * GRANULARITY));
		refused(() -> this.driver.freeAddresses(base, 4 * GRANULARITY));
		this.driver.unmap(this.driver.offset(base, GRANULARITY), GRANULARITY);
		refused(() -> this.driver.unmap(base, 2 * GRANULARITY));
		this.driver.unmap(base, GRANULARITY);
		this.driver.freeAddresses(base, 4 * GRANULARITY);
		refused(() -> this.driver.map(base, GRANULARITY, this.driver.createPhysical(0, GRANULARITY)));
	}

	@Test
	void aHandleReleasedWhileMappedKeepsItsMemoryUntilUnmapped() {
		Object base = this.driver.reserveAddresses(4 * GRANULARITY);
		Object handle = this.driver.createPhysical(0, GRANULARITY);
		this.driver.map(base, GRANULARITY, handle);
		this.driver.releasePhysical(handle);
		assertThat(this.driver.memoryInfo().freeBytes()).isEqualTo(CAPACITY - GRANULARITY);
		refused(() -> this.driver.map(this.driver.offset(base, GRANULARITY), GRANULARITY, handle));
		this.driver.setAccess(base, GRANULARITY, 0);
		this.driver.memsetD8(base, (byte) 3, 16, null);
		this.driver.unmap(base, GRANULARITY);
		assertThat(this.driver.memoryInfo().freeBytes()).isEqualTo(CAPACITY);
	}

	@Test
	void aReservedRangeHoldsNoMemoryAndPhysicalMemoryIsBoundedByTheCapacity() {
		Object base = this.driver.reserveAddresses(1L << 30);
		assertThat(this.driver.memoryInfo().freeBytes()).isEqualTo(CAPACITY);
		Object handle = this.driver.createPhysical(0, CAPACITY);
		assertThat(this.driver.memoryInfo().freeBytes()).isZero();
		assertThatExceptionOfType(CudaException.class).isThrownBy(() -> this.driver.createPhysical(0, GRANULARITY))
			.satisfies((ex) -> assertThat(ex.code()).isEqualTo(CudaException.OUT_OF_MEMORY));
		this.driver.releasePhysical(handle);
		assertThat(this.driver.memoryInfo().freeBytes()).isEqualTo(CAPACITY);
		this.driver.freeAddresses(base, 1L << 30);
	}

	@Test
	void theBytesBelongToThePhysicalMemoryAndGoWhereItIsMapped() {
		Object base = this.driver.reserveAddresses(4 * GRANULARITY);
		Object first = this.driver.createPhysical(0, GRANULARITY);
		this.driver.map(base, GRANULARITY, first);
		this.driver.setAccess(base, GRANULARITY, 0);
		this.driver.memsetD8(base, (byte) 42, 16, null);
		this.driver.synchronizeStream(null);
		this.driver.unmap(base, GRANULARITY);
		Object elsewhere = this.driver.offset(base, 2 * GRANULARITY);
		this.driver.map(elsewhere, GRANULARITY, first);
		this.driver.setAccess(elsewhere, GRANULARITY, 0);
		Object second = this.driver.createPhysical(0, GRANULARITY);
		this.driver.map(base, GRANULARITY, second);
		this.driver.setAccess(base, GRANULARITY, 0);
		byte[] moved = new byte[1];
		byte[] fresh = new byte[1];
		this.driver.copyDeviceToArray(moved, 0, elsewhere, 1);
		this.driver.copyDeviceToArray(fresh, 0, base, 1);
		assertThat(moved[0]).as("the handle's bytes came along").isEqualTo((byte) 42);
		assertThat(fresh[0]).as("a new handle holds none of them").isNotEqualTo((byte) 42);
	}

	@Test
	void aReservedRangeIsNoAllocationAndNothingIsReservedOrCreatedEmptyOrWithoutSupport() {
		Object base = this.driver.reserveAddresses(2 * GRANULARITY);
		refused(() -> this.driver.freeDevice(base));
		refused(() -> this.driver.reserveAddresses(0));
		refused(() -> this.driver.createPhysical(0, 0));
		this.driver.virtualMemorySupported = false;
		assertThatExceptionOfType(CudaException.class).isThrownBy(() -> this.driver.createPhysical(0, GRANULARITY))
			.satisfies((ex) -> assertThat(ex.code()).isEqualTo(FakeCudaDriver.NOT_SUPPORTED));
	}

	/** A range of 4 granules, the first {@code granules} of them mapped, access not set. */
	private Object mapped(int granules) {
		Object base = this.driver.reserveAddresses(4 * GRANULARITY);
		for (int i = 0; i < granules; i++) {
			this.driver.map(this.driver.offset(base, i * GRANULARITY), GRANULARITY,
					this.driver.createPhysical(0, GRANULARITY));
		}
		return base;
	}

	private static void refused(Runnable call) {
		assertThatExceptionOfType(CudaException.class).isThrownBy(call::run)
			.satisfies((ex) -> assertThat(ex.code()).isEqualTo(FakeCudaDriver.INVALID_VALUE));
	}

	private static byte[] ptx() {
		return (".version 8.0\n.target sm_75\n.address_size 64\n.visible .entry fill(\n.param .u64 fill_param_0,\n"
				+ ".param .u32 fill_param_1\n)\n{\nret;\n}\n\0").getBytes(StandardCharsets.US_ASCII);
	}

}
