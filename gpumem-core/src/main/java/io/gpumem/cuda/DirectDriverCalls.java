package io.gpumem.cuda;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;
import com.sun.jna.Structure;
import com.sun.jna.ptr.LongByReference;

import jcuda.driver.CUmemAccess_flags;
import jcuda.driver.CUmemAllocationGranularity_flags;
import jcuda.driver.CUmemAllocationType;
import jcuda.driver.CUmemLocationType;

/**
 * The driver calls that JCuda 12.6.0 marshals wrongly, made through JNA against the driver library JCuda's natives
 * loaded, with structs laid out as {@code cuda.h} lays them out, zeroed but for the fields gpumem sets.
 * <p>
 * JCuda's {@code cuMemCreate} fills {@code CUmemAllocationProp.allocFlags} from the wrong object and leaves its
 * reserved bytes as the stack held them; its {@code cuMemSetAccess} reads the location's type and device from the
 * access descriptor instead of its {@code location}; its {@code cuMemPoolCreate} stores the pool through a helper that
 * also writes a {@code Pointer}'s byte offset past the end of the {@code CUmemoryPool} object
 * (docs/gpu-verification.md). A handle of physical memory or of a pool is then the driver's number, which JCuda's
 * handle objects cannot carry, so every call taking one goes this way too. The structs a device needs are built once.
 */
final class DirectDriverCalls {

	/** The entry points called, by name. */
	private static final List<String> NAMES = List.of("cuMemGetAllocationGranularity", "cuMemCreate", "cuMemRelease",
			"cuMemMap", "cuMemSetAccess", "cuMemPoolCreate", "cuMemAllocFromPoolAsync", "cuMemPoolTrimTo",
			"cuMemPoolDestroy");

	/** The calls bound, or why they cannot be made: JNA missing, or the driver lacking one of them. */
	private static final Object LOADED = load();

	private static final Map<Integer, DeviceStructs> STRUCTS = new ConcurrentHashMap<>();

	private DirectDriverCalls() {
	}

	/** {@code cuMemGetAllocationGranularity} (minimum) of pinned memory on {@code device}. */
	static long allocationGranularity(int device) {
		Calls calls = calls();
		LongByReference granularity = new LongByReference();
		JCudaBinding.check(calls.cuMemGetAllocationGranularity(granularity, structs(device).pinnedAllocation(),
				CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM), "cuMemGetAllocationGranularity");
		return granularity.getValue();
	}

	/** {@code cuMemCreate} of {@code bytes} of pinned memory on {@code device}: the handle's number. */
	static long createPhysical(int device, long bytes) {
		Calls calls = calls();
		LongByReference handle = new LongByReference();
		JCudaBinding.check(calls.cuMemCreate(handle, bytes, structs(device).pinnedAllocation(), 0), "cuMemCreate");
		return handle.getValue();
	}

	/** {@code cuMemRelease}. */
	static void releasePhysical(long handle) {
		JCudaBinding.check(calls().cuMemRelease(handle), "cuMemRelease");
	}

	/** {@code cuMemMap} of the whole of {@code handle}'s {@code bytes} at {@code address}. */
	static void map(long address, long bytes, long handle) {
		JCudaBinding.check(calls().cuMemMap(address, bytes, 0, handle, 0), "cuMemMap");
	}

	/** {@code cuMemSetAccess}: {@code device} reads and writes the {@code bytes} mapped at {@code address}. */
	static void setAccess(long address, long bytes, int device) {
		Calls calls = calls();
		JCudaBinding.check(calls.cuMemSetAccess(address, bytes, structs(device).readWriteAccess(), 1),
				"cuMemSetAccess");
	}

	/** {@code cuMemPoolCreate} of pinned memory located on {@code device}: the pool's handle. */
	static long createPool(int device) {
		Calls calls = calls();
		LongByReference pool = new LongByReference();
		JCudaBinding.check(calls.cuMemPoolCreate(pool, structs(device).pinnedPool()), "cuMemPoolCreate");
		return pool.getValue();
	}

	/** {@code cuMemAllocFromPoolAsync}: the address of {@code bytes} from {@code pool} in {@code stream}'s order. */
	static long allocateFromPool(long pool, long bytes, long stream) {
		Calls calls = calls();
		LongByReference pointer = new LongByReference();
		JCudaBinding.check(calls.cuMemAllocFromPoolAsync(pointer, bytes, pool, stream), "cuMemAllocFromPoolAsync");
		return pointer.getValue();
	}

	/** {@code cuMemPoolTrimTo}. */
	static void trimPool(long pool, long keepBytes) {
		JCudaBinding.check(calls().cuMemPoolTrimTo(pool, keepBytes), "cuMemPoolTrimTo");
	}

	/** {@code cuMemPoolDestroy}. */
	static void destroyPool(long pool) {
		JCudaBinding.check(calls().cuMemPoolDestroy(pool), "cuMemPoolDestroy");
	}

	private static Calls calls() {
		if (LOADED instanceof String reason) {
			throw new IllegalStateException(reason);
		}
		return (Calls) LOADED;
	}

	private static DeviceStructs structs(int device) {
		return STRUCTS.computeIfAbsent(device, DeviceStructs::of);
	}

	/** The bound calls, once every entry point is found in the driver library; why not otherwise. */
	private static Object load() {
		try {
			String library = Platform.isWindows() ? "nvcuda" : "libcuda.so.1";
			NativeLibrary driver = NativeLibrary.getInstance(library);
			List<String> missing = NAMES.stream().filter((name) -> {
				try {
					driver.getFunction(name);
					return false;
				}
				catch (UnsatisfiedLinkError ex) {
					return true;
				}
			}).toList();
			if (!missing.isEmpty()) {
				return "the CUDA driver library " + library + " has no " + String.join(", ", missing)
						+ ", which gpumem calls directly (the driver is older than CUDA 11.2 or not NVIDIA's)";
			}
			return Native.load(library, Calls.class);
		}
		catch (NoClassDefFoundError ex) {
			return "gpumem calls " + String.join(", ", NAMES) + " through JNA, which is not on the class path "
					+ "(net.java.dev.jna:jna): " + ex;
		}
		catch (LinkageError | RuntimeException ex) {
			return "gpumem calls " + String.join(", ", NAMES) + " through JNA, which could not reach the CUDA driver "
					+ "library: " + ex;
		}
	}

	/** The entry points of {@link #NAMES}, as {@code cuda.h} declares them, handles and sizes as 64-bit numbers. */
	interface Calls extends Library {

		int cuMemGetAllocationGranularity(LongByReference granularity, Pointer properties, int option);

		int cuMemCreate(LongByReference handle, long bytes, Pointer properties, long flags);

		int cuMemRelease(long handle);

		int cuMemMap(long address, long bytes, long offset, long handle, long flags);

		int cuMemSetAccess(long address, long bytes, Pointer descriptors, long count);

		int cuMemPoolCreate(LongByReference pool, Pointer properties);

		int cuMemAllocFromPoolAsync(LongByReference pointer, long bytes, long pool, long stream);

		int cuMemPoolTrimTo(long pool, long keepBytes);

		int cuMemPoolDestroy(long pool);

	}

	/** The structs passed for one device, written once: the calls only read them. */
	private record DeviceStructs(Pointer pinnedAllocation, Pointer readWriteAccess, Pointer pinnedPool) {

		static DeviceStructs of(int device) {
			AllocationProperties allocation = new AllocationProperties();
			allocation.type = CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED;
			allocation.location.type = CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE;
			allocation.location.id = device;
			AccessDescriptor access = new AccessDescriptor();
			access.location.type = CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE;
			access.location.id = device;
			access.flags = CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
			PoolProperties pool = new PoolProperties();
			pool.allocType = CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED;
			pool.location.type = CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE;
			pool.location.id = device;
			return new DeviceStructs(written(allocation), written(access), written(pool));
		}

		private static Pointer written(Structure structure) {
			structure.write();
			return structure.getPointer();
		}

	}

	/** {@code CUmemLocation}. */
	@Structure.FieldOrder({ "type", "id" })
	public static class Location extends Structure {

		public int type;

		public int id;

	}

	/** {@code CUmemAllocationProp}'s {@code allocFlags}. */
	@Structure.FieldOrder({ "compressionType", "gpuDirectRDMACapable", "usage", "reserved" })
	public static class AllocationFlags extends Structure {

		public byte compressionType;

		public byte gpuDirectRDMACapable;

		public short usage;

		public byte[] reserved = new byte[4];

	}

	/** {@code CUmemAllocationProp}. */
	@Structure.FieldOrder({ "type", "requestedHandleTypes", "location", "win32HandleMetaData", "allocFlags" })
	public static class AllocationProperties extends Structure {

		public int type;

		public int requestedHandleTypes;

		public Location location = new Location();

		public Pointer win32HandleMetaData;

		public AllocationFlags allocFlags = new AllocationFlags();

	}

	/** {@code CUmemAccessDesc}. */
	@Structure.FieldOrder({ "location", "flags" })
	public static class AccessDescriptor extends Structure {

		public Location location = new Location();

		public int flags;

	}

	/** {@code CUmemPoolProps}. */
	@Structure.FieldOrder({ "allocType", "handleTypes", "location", "win32SecurityAttributes", "maxSize", "usage",
			"reserved" })
	public static class PoolProperties extends Structure {

		public int allocType;

		public int handleTypes;

		public Location location = new Location();

		public Pointer win32SecurityAttributes;

		public long maxSize;

		public short usage;

		public byte[] reserved = new byte[54];

	}

}
