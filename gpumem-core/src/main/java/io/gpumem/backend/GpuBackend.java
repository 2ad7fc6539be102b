package io.gpumem.backend;

import java.util.Optional;

import io.gpumem.memory.DeviceHealth;
import io.gpumem.memory.GpuDeviceFailedException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.memory.MemoryKind;
import io.gpumem.stream.GpuStream;

/**
 * One device's memory as gpumem sees it: an allocator per memory kind, the device's memory info and
 * its streams. Implemented by the CUDA backend and by the host backend that emulates a device.
 */
public interface GpuBackend extends AutoCloseable {

	/** The backend's short name, as the {@code gpumem.backend} property spells it: {@code cuda} or {@code host}. */
	String name();

	/** The device's ordinal. */
	int deviceId();

	/** The device's name, such as "NVIDIA H100 80GB HBM3". */
	String deviceName();

	/** The allocator for one kind of memory. */
	MemoryAllocator allocator(MemoryKind kind);

	/**
	 * The device's stream-ordered allocator of DEVICE memory ({@link MemoryAllocator#streamOrdered()}):
	 * CUDA's {@code cuMemAllocFromPoolAsync} family, made on the first call and closed with the backend.
	 */
	MemoryAllocator streamOrderedAllocator();

	/**
	 * The device's DEVICE memory mapped into reserved address ranges, or why it cannot be: decided once, on the first
	 * call, where the backend probes the device by mapping, touching and unmapping one granule.
	 */
	default VirtualMemory virtualMemory() {
		return VirtualMemory.unsupported(name() + " backend has no virtual memory");
	}

	/** Whether the device still works, and why not once it has failed for good. */
	DeviceHealth health();

	/** Free and total bytes of the device. */
	MemoryInfo memoryInfo();

	/**
	 * The device's PCI bus id, as in {@code 0000:3b:00.0}, by which the cgroup's device-memory controller names its
	 * region; empty where the backend knows none, as an emulated device.
	 */
	default Optional<String> pciBusId() {
		return Optional.empty();
	}

	/**
	 * Free and total bytes of the device while it works; empty once it has failed for good, when its context
	 * answers nothing more.
	 */
	default Optional<MemoryInfo> workingMemoryInfo() {
		if (!health().isFailed()) {
			try {
				return Optional.of(memoryInfo());
			}
			catch (GpuDeviceFailedException failed) {
				// it failed since
			}
		}
		return Optional.empty();
	}

	/**
	 * Whether copies between this device's memory and {@code peer}'s go directly, device to device, on a
	 * stream of either ({@link GpuStream#copy}); where they cannot, a copy is staged through pinned memory.
	 * Asking may enable the access, once.
	 */
	default boolean peerAccess(GpuBackend peer) {
		return false;
	}

	/** A new stream for asynchronous copies and fills on this device. */
	GpuStream createStream();

	/** A description for logs, such as "cuda device 0 (NVIDIA H100, 79.1 GiB)". */
	String describe();

	/** Releases what the backend holds of the device; the memory it handed out must be freed first. */
	@Override
	void close();

}
