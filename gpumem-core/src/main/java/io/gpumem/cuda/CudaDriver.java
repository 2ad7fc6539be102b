package io.gpumem.cuda;

import java.nio.ByteBuffer;

import io.gpumem.memory.MemoryInfo;

/**
 * The CUDA driver calls gpumem makes, one method per call: the thin layer between gpumem and JCuda.
 * <p>
 * Each method makes one driver call and throws a {@link CudaException} with the call's result code
 * when it does not succeed; it holds no logic of its own. Everything above it (contexts per thread,
 * mapping out-of-memory, carving, guarded views, streams) is written against this interface, so that it
 * can be tested with a fake driver on a machine without a GPU.
 * <p>
 * Native handles are opaque objects: pointers are JCuda's {@code CUdeviceptr} (device and managed
 * memory) and {@code Pointer} (pinned host memory), and contexts, streams and events are JCuda's
 * {@code CUcontext}, {@code CUstream} and {@code CUevent}. A {@code null} stream is the default stream.
 * Methods other than those of discovery and contexts need the device's context current on the calling
 * thread.
 */
public interface CudaDriver {

	/** {@code cuInit}. */
	void init();

	/** {@code cuDriverGetVersion}: the CUDA version the driver supports, as 1000 × major + 10 × minor. */
	int driverVersion();

	/** The CUDA version the driver binding was built against, in the same encoding. */
	int bindingVersion();

	/** {@code cuDeviceGetCount}. */
	int deviceCount();

	/** {@code cuDeviceGetName}. */
	String deviceName(int device);

	/** {@code cuDeviceGetPCIBusId}: the device's PCI bus id, as in {@code 0000:3b:00.0}. */
	String pciBusId(int device);

	/** {@code cuDeviceGetAttribute} for the compute capability, as 10 × major + minor. */
	int computeCapability(int device);

	/** {@code cuDeviceGetAttribute(CONCURRENT_MANAGED_ACCESS)}: whether managed memory can be prefetched. */
	boolean concurrentManagedAccess(int device);

	/** {@code cuDevicePrimaryCtxRetain}: the device's primary context. */
	Object retainPrimaryContext(int device);

	/** {@code cuDevicePrimaryCtxRelease}. */
	void releasePrimaryContext(int device);

	/** {@code cuCtxSetCurrent}: makes the context current on the calling OS thread. */
	void setCurrentContext(Object context);

	/** {@code cuDeviceCanAccessPeer}: whether {@code device} can reach memory of {@code peer} directly. */
	boolean canAccessPeer(int device, int peer);

	/**
	 * {@code cuCtxEnablePeerAccess}: lets the current context reach memory of {@code peerContext}; fails with
	 * {@code CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED} when it already can.
	 */
	void enablePeerAccess(Object peerContext);

	/** {@code cuMemGetInfo}: free and total bytes of the current context's device. */
	MemoryInfo memoryInfo();

	/** {@code cuMemAlloc}. */
	Object allocateDevice(long bytes);

	/**
	 * {@code cuMemPoolCreate}: a stream-ordered pool of pinned device memory located on {@code device}, as
	 * the device's default pool is; its release threshold is CUDA's default, 0.
	 */
	Object createMemoryPool(int device);

	/** {@code cuMemAllocFromPoolAsync}: {@code bytes} from {@code pool}, available in {@code stream}'s order. */
	Object allocateFromPool(Object pool, long bytes, Object stream);

	/** {@code cuMemFreeAsync}: gives a pool allocation back to its pool in {@code stream}'s order. */
	void freeAsync(Object pointer, Object stream);

	/** {@code cuMemPoolTrimTo}: releases the pool's unused memory to the device until it holds at most {@code keepBytes}. */
	void trimMemoryPool(Object pool, long keepBytes);

	/** {@code cuMemPoolDestroy}. */
	void destroyMemoryPool(Object pool);

	/**
	 * {@code cuDeviceGetAttribute(VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)}: whether the device maps physical memory
	 * into reserved address ranges ({@code cuMemAddressReserve}, {@code cuMemCreate}, {@code cuMemMap}).
	 */
	boolean virtualMemorySupported(int device);

	/**
	 * {@code cuMemGetAllocationGranularity} (minimum) of pinned memory on {@code device}: every size and offset
	 * of the virtual-memory calls is a multiple of it.
	 */
	long allocationGranularity(int device);

	/** {@code cuMemAddressReserve}: a range of {@code bytes} of virtual addresses, holding no memory. */
	Object reserveAddresses(long bytes);

	/** {@code cuMemAddressFree}: gives back a reserved range, unmapped first. */
	void freeAddresses(Object base, long bytes);

	/** {@code cuMemCreate}: {@code bytes} of physical memory on {@code device}, mapped nowhere yet. */
	Object createPhysical(int device, long bytes);

	/**
	 * {@code cuMemRelease}: drops the handle; memory still mapped stays allocated until it is unmapped.
	 */
	void releasePhysical(Object handle);

	/** {@code cuMemMap}: maps all of {@code handle}'s {@code bytes} at {@code address} of a reserved range. */
	void map(Object address, long bytes, Object handle);

	/** {@code cuMemSetAccess}: lets {@code device} read and write the mapped {@code bytes} at {@code address}. */
	void setAccess(Object address, long bytes, int device);

	/** {@code cuMemUnmap}: unmaps {@code bytes} at {@code address}, whole mappings only. */
	void unmap(Object address, long bytes);

	/** {@code cuMemAllocManaged} attached globally. */
	Object allocateManaged(long bytes);

	/** {@code cuMemFree}, for device and managed memory. */
	void freeDevice(Object pointer);

	/** {@code cuMemHostAlloc} with {@code CU_MEMHOSTALLOC_PORTABLE}: page-locked host memory. */
	Object allocatePinned(long bytes);

	/** A native-order direct view of {@code bytes} bytes of pinned memory (at most {@link Integer#MAX_VALUE}). */
	ByteBuffer pinnedView(Object pointer, long bytes);

	/** {@code cuMemFreeHost}. */
	void freePinned(Object pointer);

	/** A pointer {@code bytes} past {@code pointer}, of the same type. */
	Object offset(Object pointer, long bytes);

	/** {@code cuMemcpyHtoD} from a Java primitive array, starting {@code arrayByteOffset} bytes into it. */
	void copyArrayToDevice(Object device, Object array, long arrayByteOffset, long bytes);

	/** {@code cuMemcpyDtoH} into a Java primitive array, starting {@code arrayByteOffset} bytes into it. */
	void copyDeviceToArray(Object array, long arrayByteOffset, Object device, long bytes);

	/** {@code cuMemcpyHtoDAsync} from pinned memory. */
	void copyHostToDeviceAsync(Object device, Object pinned, long bytes, Object stream);

	/** {@code cuMemcpyDtoHAsync} into pinned memory. */
	void copyDeviceToHostAsync(Object pinned, Object device, long bytes, Object stream);

	/** {@code cuMemcpyDtoDAsync}. */
	void copyDeviceToDeviceAsync(Object target, Object source, long bytes, Object stream);

	/** {@code cuMemcpyPeerAsync}: a copy from device memory of one context to device memory of another. */
	void copyPeerAsync(Object target, Object targetContext, Object source, Object sourceContext, long bytes,
			Object stream);

	/** {@code cuMemsetD8Async}; the default stream with {@code null}. */
	void memsetD8(Object device, byte value, long count, Object stream);

	/** {@code cuMemsetD32Async}; the default stream with {@code null}. */
	void memsetD32(Object device, int value, long count, Object stream);

	/** {@code cuMemPrefetchAsync} of managed memory to the device, or to the host when {@code device} is -1. */
	void prefetch(Object pointer, long bytes, int device, Object stream);

	/** {@code cuStreamCreate} with {@code CU_STREAM_NON_BLOCKING}. */
	Object createStream();

	/** {@code cuCtxSynchronize}: waits for the work of every stream of the current context. */
	void synchronizeContext();

	/** {@code cuStreamSynchronize}. */
	void synchronizeStream(Object stream);

	/** {@code cuStreamDestroy}. */
	void destroyStream(Object stream);

	/** {@code cuEventCreate} with {@code CU_EVENT_DISABLE_TIMING}. */
	Object createEvent();

	/** {@code cuEventRecord}. */
	void recordEvent(Object event, Object stream);

	/** {@code cuEventQuery}: {@code true} when complete, {@code false} on {@code CUDA_ERROR_NOT_READY}. */
	boolean queryEvent(Object event);

	/** {@code cuEventSynchronize}. */
	void synchronizeEvent(Object event);

	/** {@code cuEventDestroy}. */
	void destroyEvent(Object event);

	/** {@code cuModuleLoadData}: a module from a PTX image (NUL-terminated text) or a cubin. */
	Object loadModule(byte[] image);

	/** {@code cuModuleGetFunction}: the kernel of that entry point name. */
	Object function(Object module, String name);

	/**
	 * {@code cuLaunchKernel} on a one-dimensional grid: {@code blocks} blocks of {@code threadsPerBlock}
	 * threads, {@code sharedBytes} of dynamic shared memory, on {@code stream}. Each argument is a device
	 * pointer of this driver or an {@code Integer}, {@code Long}, {@code Float} or {@code Double}, passed by
	 * value as the kernel's parameter of that position.
	 */
	void launchKernel(Object function, int blocks, int threadsPerBlock, int sharedBytes, Object stream,
			Object[] arguments);

	/** {@code cuModuleUnload}. */
	void unloadModule(Object module);

}
