package io.gpumem.host;

import org.junit.jupiter.api.Test;

import io.gpumem.memory.AddressRange;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The host backend's emulation of CUDA's virtual memory keeps the rules the real driver keeps. */
class HostVirtualMemoryTest {

	private static final long GRANULE = HostVirtualMemory.GRANULARITY;

	private final HostBackend backend = new HostBackend(8 * GRANULE);

	private final MemoryAllocator physical = this.backend.virtualMemory().allocator();

	@Test
	void aReservedRangeHoldsNoMemoryAndAMappedGranuleDoes() {
		AddressRange range = this.physical.addressSpace().reserve(64 * GRANULE);
		assertThat(free()).isEqualTo(8 * GRANULE);
		Allocation granule = this.physical.allocate(GRANULE);
		range.map(GRANULE, granule);
		assertThat(free()).isEqualTo(7 * GRANULE);
		assertThatThrownBy(() -> granule.fill(0, 8, (byte) 1)).isInstanceOf(IllegalStateException.class)
			.hasMessageContaining("used through a range");
		range.unmap(GRANULE, granule);
		this.physical.free(granule);
		assertThat(free()).isEqualTo(8 * GRANULE);
		range.release();
	}

	@Test
	void sizesAndOffsetsAreWholeGranulesAndAMappedGranuleIsNotMappedOver() {
		AddressRange range = this.physical.addressSpace().reserve(4 * GRANULE);
		assertThatThrownBy(() -> this.physical.addressSpace().reserve(GRANULE + 4096))
			.isInstanceOf(IllegalArgumentException.class).hasMessageContaining("granules");
		assertThatThrownBy(() -> this.physical.allocate(GRANULE / 2)).isInstanceOf(IllegalArgumentException.class);
		Allocation two = this.physical.allocate(2 * GRANULE);
		assertThatThrownBy(() -> range.map(4096, two)).isInstanceOf(IllegalArgumentException.class);
		assertThatThrownBy(() -> range.map(3 * GRANULE, two)).isInstanceOf(IllegalArgumentException.class);
		range.map(0, two);
		Allocation one = this.physical.allocate(GRANULE);
		assertThatThrownBy(() -> range.map(GRANULE, one)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("already mapped");
		assertThatThrownBy(() -> range.unmap(GRANULE, two)).isInstanceOf(IllegalArgumentException.class);
		assertThatThrownBy(range::release).isInstanceOf(IllegalStateException.class).hasMessageContaining("mapped");
		range.unmap(0, two);
		range.release();
		this.physical.free(two);
		this.physical.free(one);
		assertThat(free()).isEqualTo(8 * GRANULE);
	}

	@Test
	void mappedBytesTakeACopyAcrossAGranuleBoundaryAndAreRefusedOnceUnmapped() {
		AddressRange range = this.physical.addressSpace().reserve(4 * GRANULE);
		Allocation first = this.physical.allocate(GRANULE);
		Allocation second = this.physical.allocate(GRANULE);
		range.map(0, first);
		range.map(GRANULE, second);
		Allocation view = range.slice(GRANULE - 16, 32);
		view.copyFromHost(0, new long[] { 1, 2, 3, 4 }, 0, 4, ElementType.LONG);
		long[] read = new long[4];
		view.copyToHost(0, read, 0, 4, ElementType.LONG);
		assertThat(read).containsExactly(1, 2, 3, 4);
		Allocation across = range.slice(2 * GRANULE - 16, 32);
		assertThatThrownBy(() -> across.copyToHost(0, read, 0, 4, ElementType.LONG))
			.as("a view of bytes not all mapped, used").isInstanceOf(IllegalStateException.class)
			.hasMessageContaining("unmapped");

		range.unmap(GRANULE, second);
		assertThatThrownBy(() -> view.copyToHost(0, read, 0, 4, ElementType.LONG))
			.isInstanceOf(IllegalStateException.class).hasMessageContaining("unmapped");
		range.unmap(0, first);
		range.release();
		this.physical.free(first);
		this.physical.free(second);
	}

	@Test
	void physicalMemoryReleasedWhileMappedIsChargedUntilUnmapped() {
		AddressRange range = this.physical.addressSpace().reserve(4 * GRANULE);
		Allocation granule = this.physical.allocate(GRANULE);
		range.map(0, granule);
		this.physical.free(granule);
		assertThat(free()).isEqualTo(7 * GRANULE);
		range.slice(0, 8).fill(0, 8, (byte) 3);
		assertThatThrownBy(() -> this.physical.free(granule)).isInstanceOf(IllegalStateException.class);
		range.unmap(0, granule);
		assertThat(free()).isEqualTo(8 * GRANULE);
		range.release();
	}

	@Test
	void aReleasedRangesPagesServeTheNextRangeOfItsSizeAndNotItsOldViews() {
		AddressRange first = this.physical.addressSpace().reserve(4 * GRANULE);
		Allocation granule = this.physical.allocate(GRANULE);
		first.map(0, granule);
		Allocation stale = first.slice(0, 8);
		stale.copyFromHost(0, new long[] { 42 }, 0, 1, ElementType.LONG);
		first.unmap(0, granule);
		first.release();
		AddressRange second = this.physical.addressSpace().reserve(4 * GRANULE);
		second.map(0, granule);
		long[] read = new long[1];
		second.slice(0, 8).copyToHost(0, read, 0, 1, ElementType.LONG);
		assertThat(read[0]).as("the same pages, holding none of the old range's bytes, as on CUDA")
			.isEqualTo(0xCDCDCDCDCDCDCDCDL);
		assertThatThrownBy(() -> stale.copyToHost(0, read, 0, 1, ElementType.LONG))
			.isInstanceOf(IllegalStateException.class).hasMessageContaining("released");
		second.unmap(0, granule);
		second.release();
		this.physical.free(granule);
		assertThat(free()).isEqualTo(8 * GRANULE);
	}

	/** New physical memory mapped where other memory was holds none of its bytes, as on CUDA, which a sleep relies on. */
	@Test
	void aGranuleMappedAgainHoldsNoneOfTheBytesWrittenBefore() {
		AddressRange range = this.physical.addressSpace().reserve(2 * GRANULE);
		Allocation first = this.physical.allocate(GRANULE);
		range.map(GRANULE, first);
		range.slice(GRANULE, GRANULE).fill(0, GRANULE, (byte) 42);
		range.unmap(GRANULE, first);
		this.physical.free(first);
		Allocation second = this.physical.allocate(GRANULE);
		range.map(GRANULE, second);
		byte[] read = new byte[(int) GRANULE];
		range.slice(GRANULE, GRANULE).copyToHost(0, read, 0, read.length, ElementType.BYTE);
		byte[] unwritten = new byte[read.length];
		java.util.Arrays.fill(unwritten, (byte) 0xCD);
		assertThat(read).isEqualTo(unwritten);
		range.unmap(GRANULE, second);
		this.physical.free(second);
		range.release();
	}

	@Test
	void physicalMemoryBeyondTheCapacityIsOutOfMemory() {
		Allocation all = this.physical.allocate(8 * GRANULE);
		assertThatThrownBy(() -> this.physical.allocate(GRANULE)).isInstanceOf(GpuOutOfMemoryException.class);
		this.physical.free(all);
		assertThat(free()).isEqualTo(8 * GRANULE);
	}

	private long free() {
		return this.backend.memoryInfo().freeBytes();
	}

}
