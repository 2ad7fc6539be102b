package io.gpumem.cuda;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

import jcuda.NativePointerObject;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmemAttach_flags;
import jcuda.driver.CUmodule;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;

import io.gpumem.memory.MemoryInfo;

/**
 * {@link CudaDriver} on JCuda: each method one JCuda call and a check of its result code, but for the calls JCuda
 * marshals wrongly, which go through JNA ({@link DirectDriverCalls}). With those, the only classes of gpumem that
 * touch JCuda; loading it loads JCuda's natives and {@code libcuda}.
 */
final class JCudaBinding implements CudaDriver {

	@Override
	public void init() {
		check(JCudaDriver.cuInit(0), "cuInit");
	}

	@Override
	public int driverVersion() {
		int[] version = new int[1];
		check(JCudaDriver.cuDriverGetVersion(version), "cuDriverGetVersion");
		return version[0];
	}

	@Override
	public int bindingVersion() {
		return JCudaDriver.CUDA_VERSION;
	}

	@Override
	public int deviceCount() {
		int[] count = new int[1];
		check(JCudaDriver.cuDeviceGetCount(count), "cuDeviceGetCount");
		return count[0];
	}

	@Override
	public String deviceName(int device) {
		byte[] name = new byte[256];
		check(JCudaDriver.cuDeviceGetName(name, name.length, device(device)), "cuDeviceGetName");
		return terminated(name);
	}

	@Override
	public String pciBusId(int device) {
		String[] busId = new String[1];
		check(JCudaDriver.cuDeviceGetPCIBusId(busId, 32, device(device)), "cuDeviceGetPCIBusId");
		return busId[0].trim();
	}

	private static String terminated(byte[] text) {
		int length = 0;
		while (length < text.length && text[length] != 0) {
			length++;
		}
		return new String(text, 0, length, StandardCharsets.UTF_8);
	}

	@Override
	public int computeCapability(int device) {
		return 10 * attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
				+ attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
	}

	@Override
	public boolean concurrentManagedAccess(int device) {
		return attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) != 0;
	}

	@Override
	public boolean virtualMemorySupported(int device) {
		return attribute(device, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) != 0;
	}

	@Override
	public long allocationGranularity(int device) {
		return DirectDriverCalls.allocationGranularity(device);
	}

	@Override
	public Object reserveAddresses(long bytes) {
		DevicePointer base = new DevicePointer();
		check(JCudaDriver.cuMemAddressReserve(base, bytes, 0, new CUdeviceptr(), 0), "cuMemAddressReserve");
		return base;
	}

	@Override
	public void freeAddresses(Object base, long bytes) {
		check(JCudaDriver.cuMemAddressFree((CUdeviceptr) base, bytes), "cuMemAddressFree");
	}

	/** {@inheritDoc} The handle is the driver's number, a {@link Long}. */
	@Override
	public Object createPhysical(int device, long bytes) {
		return DirectDriverCalls.createPhysical(device, bytes);
	}

	@Override
	public void releasePhysical(Object handle) {
		DirectDriverCalls.releasePhysical((Long) handle);
	}

	@Override
	public void map(Object address, long bytes, Object handle) {
		DirectDriverCalls.map(((DevicePointer) address).value(), bytes, (Long) handle);
	}

	@Override
	public void setAccess(Object address, long bytes, int device) {
		DirectDriverCalls.setAccess(((DevicePointer) address).value(), bytes, device);
	}

	@Override
	public void unmap(Object address, long bytes) {
		check(JCudaDriver.cuMemUnmap((CUdeviceptr) address, bytes), "cuMemUnmap");
	}

	@Override
	public Object retainPrimaryContext(int device) {
		CUcontext context = new CUcontext();
		check(JCudaDriver.cuDevicePrimaryCtxRetain(context, device(device)), "cuDevicePrimaryCtxRetain");
		return context;
	}

	@Override
	public void releasePrimaryContext(int device) {
		check(JCudaDriver.cuDevicePrimaryCtxRelease(device(device)), "cuDevicePrimaryCtxRelease");
	}

	@Override
	public void setCurrentContext(Object context) {
		check(JCudaDriver.cuCtxSetCurrent((CUcontext) context), "cuCtxSetCurrent");
	}

	@Override
	public boolean canAccessPeer(int device, int peer) {
		int[] can = new int[1];
		check(JCudaDriver.cuDeviceCanAccessPeer(can, device(device), device(peer)), "cuDeviceCanAccessPeer");
		return can[0] != 0;
	}

	@Override
	public void enablePeerAccess(Object peerContext) {
		check(JCudaDriver.cuCtxEnablePeerAccess((CUcontext) peerContext, 0), "cuCtxEnablePeerAccess");
	}

	@Override
	public MemoryInfo memoryInfo() {
		long[] free = new long[1];
		long[] total = new long[1];
		check(JCudaDriver.cuMemGetInfo(free, total), "cuMemGetInfo");
		return new MemoryInfo(free[0], total[0]);
	}

	@Override
	public Object allocateDevice(long bytes) {
		CUdeviceptr pointer = new CUdeviceptr();
		check(JCudaDriver.cuMemAlloc(pointer, bytes), "cuMemAlloc");
		return pointer;
	}

	/** {@inheritDoc} The pool is the driver's handle, a {@link Long}. */
	@Override
	public Object createMemoryPool(int device) {
		return DirectDriverCalls.createPool(device);
	}

	@Override
	public Object allocateFromPool(Object pool, long bytes, Object stream) {
		return DevicePointer.at(DirectDriverCalls.allocateFromPool((Long) pool, bytes, StreamHandle.value(stream)));
	}

	@Override
	public void freeAsync(Object pointer, Object stream) {
		check(JCudaDriver.cuMemFreeAsync((CUdeviceptr) pointer, stream(stream)), "cuMemFreeAsync");
	}

	@Override
	public void trimMemoryPool(Object pool, long keepBytes) {
		DirectDriverCalls.trimPool((Long) pool, keepBytes);
	}

	@Override
	public void destroyMemoryPool(Object pool) {
		DirectDriverCalls.destroyPool((Long) pool);
	}

	@Override
	public Object allocateManaged(long bytes) {
		CUdeviceptr pointer = new CUdeviceptr();
		check(JCudaDriver.cuMemAllocManaged(pointer, bytes, CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
		return pointer;
	}

	@Override
	public void freeDevice(Object pointer) {
		check(JCudaDriver.cuMemFree((CUdeviceptr) pointer), "cuMemFree");
	}

	@Override
	public Object allocatePinned(long bytes) {
		Pointer pointer = new Pointer();
		check(JCudaDriver.cuMemHostAlloc(pointer, bytes, JCudaDriver.CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc");
		return pointer;
	}

	@Override
	public ByteBuffer pinnedView(Object pointer, long bytes) {
		return ((Pointer) pointer).getByteBuffer(0, bytes).order(ByteOrder.nativeOrder());
	}

	@Override
	public void freePinned(Object pointer) {
		check(JCudaDriver.cuMemFreeHost((Pointer) pointer), "cuMemFreeHost");
	}

	@Override
	public Object offset(Object pointer, long bytes) {
		return (bytes == 0) ? pointer : ((Pointer) pointer).withByteOffset(bytes);
	}

	@Override
	public void copyArrayToDevice(Object device, Object array, long arrayByteOffset, long bytes) {
		check(JCudaDriver.cuMemcpyHtoD((CUdeviceptr) device, arrayPointer(array, arrayByteOffset), bytes),
				"cuMemcpyHtoD");
	}

	@Override
	public void copyDeviceToArray(Object array, long arrayByteOffset, Object device, long bytes) {
		check(JCudaDriver.cuMemcpyDtoH(arrayPointer(array, arrayByteOffset), (CUdeviceptr) device, bytes),
				"cuMemcpyDtoH");
	}

	@Override
	public void copyHostToDeviceAsync(Object device, Object pinned, long bytes, Object stream) {
		check(JCudaDriver.cuMemcpyHtoDAsync((CUdeviceptr) device, (Pointer) pinned, bytes, stream(stream)),
				"cuMemcpyHtoDAsync");
	}

	@Override
	public void copyDeviceToHostAsync(Object pinned, Object device, long bytes, Object stream) {
		check(JCudaDriver.cuMemcpyDtoHAsync((Pointer) pinned, (CUdeviceptr) device, bytes, stream(stream)),
				"cuMemcpyDtoHAsync");
	}

	@Override
	public void copyDeviceToDeviceAsync(Object target, Object source, long bytes, Object stream) {
		check(JCudaDriver.cuMemcpyDtoDAsync((CUdeviceptr) target, (CUdeviceptr) source, bytes, stream(stream)),
				"cuMemcpyDtoDAsync");
	}

	@Override
	public void copyPeerAsync(Object target, Object targetContext, Object source, Object sourceContext, long bytes,
			Object stream) {
		check(JCudaDriver.cuMemcpyPeerAsync((CUdeviceptr) target, (CUcontext) targetContext, (CUdeviceptr) source,
				(CUcontext) sourceContext, bytes, stream(stream)), "cuMemcpyPeerAsync");
	}

	@Override
	public void memsetD8(Object device, byte value, long count, Object stream) {
		if (stream == null) {
			check(JCudaDriver.cuMemsetD8((CUdeviceptr) device, value, count), "cuMemsetD8");
		}
		else {
			check(JCudaDriver.cuMemsetD8Async((CUdeviceptr) device, value, count, (CUstream) stream),
					"cuMemsetD8Async");
		}
	}

	@Override
	public void memsetD32(Object device, int value, long count, Object stream) {
		if (stream == null) {
			check(JCudaDriver.cuMemsetD32((CUdeviceptr) device, value, count), "cuMemsetD32");
		}
		else {
			check(JCudaDriver.cuMemsetD32Async((CUdeviceptr) device, value, count, (CUstream) stream),
					"cuMemsetD32Async");
		}
	}

	@Override
	public void prefetch(Object pointer, long bytes, int device, Object stream) {
		CUdevice target = (device < 0) ? JCudaDriver.CU_DEVICE_CPU : device(device);
		check(JCudaDriver.cuMemPrefetchAsync((CUdeviceptr) pointer, bytes, target, stream(stream)),
				"cuMemPrefetchAsync");
	}

	@Override
	public Object createStream() {
		CUstream stream = new StreamHandle();
		check(JCudaDriver.cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate");
		return stream;
	}

	@Override
	public void synchronizeContext() {
		check(JCudaDriver.cuCtxSynchronize(), "cuCtxSynchronize");
	}

	@Override
	public void synchronizeStream(Object stream) {
		check(JCudaDriver.cuStreamSynchronize(stream(stream)), "cuStreamSynchronize");
	}

	@Override
	public void destroyStream(Object stream) {
		check(JCudaDriver.cuStreamDestroy((CUstream) stream), "cuStreamDestroy");
	}

	@Override
	public Object createEvent() {
		CUevent event = new CUevent();
		check(JCudaDriver.cuEventCreate(event, CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate");
		return event;
	}

	@Override
	public void recordEvent(Object event, Object stream) {
		check(JCudaDriver.cuEventRecord((CUevent) event, stream(stream)), "cuEventRecord");
	}

	@Override
	public boolean queryEvent(Object event) {
		int result = JCudaDriver.cuEventQuery((CUevent) event);
		if (result == CudaException.NOT_READY) {
			return false;
		}
		check(result, "cuEventQuery");
		return true;
	}

	@Override
	public void synchronizeEvent(Object event) {
		check(JCudaDriver.cuEventSynchronize((CUevent) event), "cuEventSynchronize");
	}

	@Override
	public void destroyEvent(Object event) {
		check(JCudaDriver.cuEventDestroy((CUevent) event), "cuEventDestroy");
	}

	@Override
	public Object loadModule(byte[] image) {
		CUmodule module = new CUmodule();
		check(JCudaDriver.cuModuleLoadData(module, image), "cuModuleLoadData");
		return module;
	}

	@Override
	public Object function(Object module, String name) {
		CUfunction function = new CUfunction();
		check(JCudaDriver.cuModuleGetFunction(function, (CUmodule) module, name), "cuModuleGetFunction(" + name + ")");
		return function;
	}

	@Override
	public void launchKernel(Object function, int blocks, int threadsPerBlock, int sharedBytes, Object stream,
			Object[] arguments) {
		NativePointerObject[] parameters = new NativePointerObject[arguments.length];
		for (int i = 0; i < arguments.length; i++) {
			parameters[i] = parameter(arguments[i]);
		}
		check(JCudaDriver.cuLaunchKernel((CUfunction) function, blocks, 1, 1, threadsPerBlock, 1, 1, sharedBytes,
				stream(stream), Pointer.to(parameters), null), "cuLaunchKernel");
	}

	@Override
	public void unloadModule(Object module) {
		check(JCudaDriver.cuModuleUnload((CUmodule) module), "cuModuleUnload");
	}

	private static Pointer parameter(Object argument) {
		if (argument instanceof CUdeviceptr pointer) {
			return Pointer.to(pointer);
		}
		if (argument instanceof Integer value) {
			return Pointer.to(new int[] { value });
		}
		if (argument instanceof Long value) {
			return Pointer.to(new long[] { value });
		}
		if (argument instanceof Float value) {
			return Pointer.to(new float[] { value });
		}
		if (argument instanceof Double value) {
			return Pointer.to(new double[] { value });
		}
		throw new IllegalArgumentException("not a kernel argument: " + argument);
	}

	private static CUdevice device(int ordinal) {
		CUdevice device = new CUdevice();
		check(JCudaDriver.cuDeviceGet(device, ordinal), "cuDeviceGet");
		return device;
	}

	private static int attribute(int device, int attribute) {
		int[] value = new int[1];
		check(JCudaDriver.cuDeviceGetAttribute(value, attribute, device(device)), "cuDeviceGetAttribute");
		return value[0];
	}

	private static CUstream stream(Object stream) {
		return (stream != null) ? (CUstream) stream : new CUstream();
	}

	private static Pointer arrayPointer(Object array, long byteOffset) {
		Pointer pointer;
		if (array instanceof byte[] bytes) {
			pointer = Pointer.to(bytes);
		}
		else if (array instanceof int[] ints) {
			pointer = Pointer.to(ints);
		}
		else if (array instanceof long[] longs) {
			pointer = Pointer.to(longs);
		}
		else if (array instanceof float[] floats) {
			pointer = Pointer.to(floats);
		}
		else if (array instanceof double[] doubles) {
			pointer = Pointer.to(doubles);
		}
		else {
			throw new IllegalArgumentException("not a primitive array of a supported type: " + array);
		}
		return (byteOffset == 0) ? pointer : pointer.withByteOffset(byteOffset);
	}

	/** Throws the {@link CudaException} of {@code call} unless {@code result} is {@code CUDA_SUCCESS}. */
	static void check(int result, String call) {
		if (result != CUresult.CUDA_SUCCESS) {
			throw new CudaException(call, result, CUresult.stringFor(result));
		}
	}

	/**
	 * A device address whose value can be read, for the calls that go through JNA, and made, for the addresses they
	 * answer: JCuda passes the driver a pointer's native value plus its byte offset, so an address is an offset past a
	 * null pointer.
	 */
	private static final class DevicePointer extends CUdeviceptr {

		private static final DevicePointer NULL = new DevicePointer();

		DevicePointer() {
		}

		private DevicePointer(DevicePointer base, long byteOffset) {
			super(base, byteOffset);
		}

		static DevicePointer at(long address) {
			return new DevicePointer(NULL, address);
		}

		@Override
		public CUdeviceptr withByteOffset(long byteOffset) {
			return new DevicePointer(this, byteOffset);
		}

		long value() {
			return getNativePointer() + getByteOffset();
		}

	}

	/** A stream whose driver handle can be read, for the calls that go through JNA. */
	private static final class StreamHandle extends CUstream {

		/** The handle of {@code stream}, 0 for the default stream ({@code null}). */
		static long value(Object stream) {
			if (stream == null) {
				return 0;
			}
			if (stream instanceof StreamHandle handle) {
				return handle.getNativePointer();
			}
			throw new IllegalArgumentException("not a stream this binding created: " + stream);
		}

	}

}
