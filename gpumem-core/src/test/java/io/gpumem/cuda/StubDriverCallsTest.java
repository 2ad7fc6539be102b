package io.gpumem.cuda;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUmemAccess_flags;
import jcuda.driver.CUmemAllocationHandleType;
import jcuda.driver.CUmemAllocationType;
import jcuda.driver.CUmemAttach_flags;
import jcuda.driver.CUmemLocationType;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.gpumem.backend.VirtualMemory;
import io.gpumem.cuda.StubDriver.Call;
import io.gpumem.cuda.StubDriver.Recorded;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.SleepMode;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.stream.GpuEvent;
import io.gpumem.stream.GpuStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the driver receives of each call gpumem makes, through JCuda's real natives and JNA, read by the stub driver
 * field by field through {@code cuda.h}'s own struct definitions: properties, descriptors, addresses, handles, sizes,
 * flags, streams and kernel parameters as the C ABI delivered them.
 */
@Tag(StubDriver.TAG)
class StubDriverCallsTest {

	/** Where the calls gpumem makes are named: JCuda's, and those made through JNA. */
	private static final Path CUDA_SOURCES = Path.of("src", "main", "java", "io", "gpumem", "cuda");

	private static final Pattern CALL_NAMED = Pattern.compile("(?:JCudaDriver\\.|\\bint )(cu[A-Z]\\w*)\\(");

	/** What the probe of virtual memory calls, in order, besides binding the context. */
	private static final List<String> PROBE_CALLS = List.of("cuMemGetAllocationGranularity", "cuMemAddressReserve",
			"cuMemCreate", "cuMemMap", "cuMemSetAccess", "cuMemsetD8", "cuMemUnmap", "cuMemRelease", "cuMemAddressFree");

	private final List<AutoCloseable> opened = new ArrayList<>();

	private StubDriver stub;

	private Map<String, Integer> heldBefore;

	@BeforeEach
	void startRecording() {
		this.stub = StubDriver.loaded();
		this.heldBefore = this.stub.holdings();
		this.stub.clear();
	}

	@AfterEach
	void everythingGoesBack() throws Exception {
		for (int i = this.opened.size() - 1; i >= 0; i--) {
			this.opened.get(i).close();
		}
		if (this.stub == null) {
			return;
		}
		assertThat(this.stub.holdings()).as("held after every pool and backend closed").isEqualTo(this.heldBefore);
	}

	@Test
	void theProbeAsksTheDeviceItNamesInItsOwnContext() {
		CudaProbeResult probe = CudaProbe.probe(1);
		assertThat(probe.usable()).as(probe.reason()).isTrue();
		assertThat(probe.deviceName()).isEqualTo("gpumem stub device 1");
		Recorded calls = this.stub.calls();
		assertThat(calls.only("cuInit").number("flags")).isZero();
		assertThat(calls.only("cuDeviceGetName").number("device")).isEqualTo(1);
		assertThat(calls.named("cuDeviceGetAttribute")).extracting((call) -> call.number("attribute"))
			.containsExactly((long) CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
					(long) CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
		assertThat(calls.named("cuDeviceGetAttribute")).allSatisfy((call) -> assertThat(call.number("device")).isOne());
		Call retain = calls.only("cuDevicePrimaryCtxRetain");
		assertThat(retain.number("device")).isOne();
		assertThat(calls.only("cuCtxSetCurrent").number("context")).isEqualTo(retain.number("context"));
		assertThat(calls.only("cuMemGetInfo").number("device")).isOne();
		assertThat(calls.only("cuDevicePrimaryCtxRelease").number("device")).isOne();
		assertThat(calls.all()).allMatch(StubDriverCallsTest::succeeded, "succeeded");
	}

	/**
	 * The device's PCI bus id, by which the cgroup's device-memory controller names its region, is asked of the
	 * device the backend opened and read back as the driver writes it.
	 */
	@Test
	void theBusIdIsAskedOfTheOpenedDevice() {
		CudaBackend backend = open(1);
		assertThat(backend.pciBusId()).contains("0000:02:00.0");
		Call busId = this.stub.calls().only("cuDeviceGetPCIBusId");
		assertThat(busId.number("device")).isOne();
		assertThat(busId.number("length")).isPositive();
	}

	/**
	 * The probe of virtual memory reserves a granule of addresses, creates a granule of physical memory with
	 * allocation properties zeroed but for pinned memory on the device, maps it there, opens it to the device for
	 * reading and writing, fills it, and gives everything back.
	 */
	@ParameterizedTest
	@ValueSource(ints = { 0, 1 })
	void physicalMemoryIsCreatedMappedAndOpenedWithStructsAsCudaHLaysThemOut(int device) {
		CudaBackend backend = open(device);
		int mark = this.stub.calls().size();
		VirtualMemory virtualMemory = backend.virtualMemory();
		Recorded calls = this.stub.callsSince(mark);
		assertThat(virtualMemory.supported()).as("%s, having received%s", virtualMemory.reason(), calls).isTrue();
		assertThat(calls.names().stream().filter(PROBE_CALLS::contains)).containsExactlyElementsOf(PROBE_CALLS);
		assertThat(calls.all()).allMatch(StubDriverCallsTest::succeeded, "succeeded");

		Call granularity = calls.only("cuMemGetAllocationGranularity");
		assertPinnedOn(device, granularity);
		long granule = granularity.number("granularity");
		assertThat(virtualMemory.allocator().addressSpace().granularity()).isEqualTo(granule);
		Call reserve = calls.only("cuMemAddressReserve");
		assertThat(List.of(reserve.number("bytes"), reserve.number("alignment"), reserve.number("hint"),
				reserve.number("flags"))).containsExactly(granule, 0L, 0L, 0L);
		long range = reserve.number("pointer");
		Call create = calls.only("cuMemCreate");
		assertPinnedOn(device, create);
		assertThat(List.of(create.number("bytes"), create.number("flags"))).containsExactly(granule, 0L);
		Call map = calls.only("cuMemMap");
		assertThat(List.of(map.number("pointer"), map.number("bytes"), map.number("offset"), map.number("handle"),
				map.number("flags"))).containsExactly(range, granule, 0L, create.number("handle"), 0L);
		Call access = calls.only("cuMemSetAccess");
		assertThat(List.of(access.number("pointer"), access.number("bytes"), access.number("count")))
			.containsExactly(range, granule, 1L);
		assertThat(List.of(access.number("desc[0].location.type"), access.number("desc[0].location.id"),
				access.number("desc[0].flags")))
			.containsExactly((long) CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, (long) device,
					(long) CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
		Call fill = calls.only("cuMemsetD8");
		assertThat(List.of(fill.number("target"), fill.number("count"))).containsExactly(range, granule);
		Call unmap = calls.only("cuMemUnmap");
		assertThat(List.of(unmap.number("pointer"), unmap.number("bytes"))).containsExactly(range, granule);
		assertThat(calls.only("cuMemRelease").number("handle")).isEqualTo(create.number("handle"));
		Call free = calls.only("cuMemAddressFree");
		assertThat(List.of(free.number("pointer"), free.number("bytes"))).containsExactly(range, granule);
	}

	/**
	 * The stream-ordered pool is created with pool properties zeroed but for pinned memory on the device, and the
	 * handles the driver gave come back to it whole: the pool to every allocation, trim and destroy, the request's
	 * stream where the thread has bound one and the allocator's own otherwise.
	 */
	@Test
	void theStreamOrderedPoolIsCreatedWithZeroedPropertiesAndGetsItsHandlesBack() {
		CudaBackend backend = open(0);
		int mark = this.stub.calls().size();
		CudaAsyncAllocator ordered = (CudaAsyncAllocator) backend.streamOrderedAllocator();
		GpuStream stream = backend.createStream();
		StratifiedMemoryPool pool = new StratifiedMemoryPool(ordered, PoolConfig.builder("async").build());
		try (PooledBuffer bound = pool.acquire(100_000, stream); PooledBuffer unbound = pool.acquire(100_000)) {
			bound.fill((byte) 1);
			unbound.fill((byte) 2);
		}
		pool.trim(0);
		pool.close();
		stream.close();
		backend.close();
		Recorded calls = this.stub.callsSince(mark);
		assertThat(calls.all()).allMatch(StubDriverCallsTest::succeeded, "succeeded");

		Call create = calls.only("cuMemPoolCreate");
		assertThat(List.of(create.number("props.allocType"), create.number("props.handleTypes"),
				create.number("props.location.type"), create.number("props.location.id"),
				create.number("props.win32SecurityAttributes"), create.number("props.maxSize"),
				create.number("props.usage")))
			.containsExactly((long) CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED,
					(long) CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_NONE,
					(long) CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, 0L, 0L, 0L, 0L);
		assertThat(create.text("props.reserved")).as("every reserved byte zero").matches("(00)+");
		long handle = create.number("pool");
		List<Call> streams = calls.named("cuStreamCreate");
		assertThat(streams).hasSize(2);
		long own = streams.get(0).number("stream");
		long requests = streams.get(1).number("stream");
		List<Call> allocations = calls.named("cuMemAllocFromPoolAsync");
		assertThat(allocations).extracting((call) -> call.number("pool")).containsExactly(handle, handle);
		assertThat(allocations).extracting((call) -> call.number("stream")).containsExactly(requests, own);
		assertThat(allocations).allSatisfy(
				(call) -> assertThat(call.number("bytes")).isEqualTo(pool.blockSize(100_000)));
		assertThat(calls.named("cuMemFreeAsync")).extracting((call) -> call.number("pointer"))
			.containsExactlyInAnyOrderElementsOf(
					allocations.stream().map((call) -> call.number("pointer")).toList());
		assertThat(calls.named("cuMemPoolTrimTo")).isNotEmpty()
			.allSatisfy((call) -> assertThat(call.number("pool")).isEqualTo(handle));
		Call destroy = calls.only("cuMemPoolDestroy");
		assertThat(List.of(destroy.number("pool"), destroy.number("outstanding"))).containsExactly(handle, 0L);
	}

	/**
	 * Copies and fills reach the buffer's address, at the offset asked, with the bytes and values asked; the
	 * asynchronous ones on the stream's handle, from and to pinned memory; events without timing, streams
	 * non-blocking, pinned memory portable.
	 */
	@Test
	void copiesAndFillsReachTheBuffersAddressOnTheirStream() {
		CudaBackend backend = open(0);
		StratifiedMemoryPool device = pool(backend, MemoryKind.DEVICE);
		StratifiedMemoryPool pinned = pool(backend, MemoryKind.PINNED);
		int mark = this.stub.calls().size();
		int[] values = { 3, 1, 4, 1, 5, 9, 2, 6 };
		int[] back = new int[values.length];
		byte[] staged = new byte[256];
		GpuStream stream = backend.createStream();
		try (PooledBuffer buffer = device.acquire(4096); PooledBuffer other = device.acquire(4096);
				PooledBuffer staging = pinned.acquire(4096)) {
			buffer.fill((byte) 0x5A);
			buffer.copyFrom(12, values, 0, values.length);
			buffer.copyTo(12, back, 0, back.length);
			buffer.fillInts(1024, 16, 0xDEADBEEF);
			staging.fill((byte) 0x33);
			stream.copy(staging, 0, buffer, 2048, 256);
			stream.copy(buffer, 512, staging, 0, 256);
			stream.copy(buffer, other);
			stream.fill(buffer, 64, 32, (byte) 7);
			try (GpuEvent done = stream.record()) {
				assertThat(done.isComplete()).as("the stub's first answer after a record").isFalse();
				done.await();
				assertThat(done.isComplete()).isTrue();
			}
			stream.synchronize();
			staging.copyTo(0, staged, 0, staged.length);
		}
		stream.close();
		pinned.trim(0);
		assertThat(back).containsExactly(values);
		assertThat(staged).containsOnly((byte) 0x5A);
		Recorded calls = this.stub.callsSince(mark);
		assertThat(calls.all()).allMatch(StubDriverCallsTest::succeeded, "succeeded");

		Call fill = calls.only("cuMemsetD8");
		long address = fill.number("target");
		assertThat(List.of(fill.number("value"), fill.text("target.kind"))).containsExactly(0x5AL, "device");
		Call upload = calls.only("cuMemcpyHtoD");
		assertThat(List.of(upload.number("target"), upload.number("bytes")))
			.containsExactly(address + 12, 4L * values.length);
		Call download = calls.only("cuMemcpyDtoH");
		assertThat(List.of(download.number("source"), download.number("bytes")))
			.containsExactly(address + 12, 4L * values.length);
		Call words = calls.only("cuMemsetD32");
		assertThat(List.of(words.number("target"), words.number("value"), words.number("count")))
			.containsExactly(address + 1024, 0xDEADBEEFL, 16L);

		long handle = calls.only("cuStreamCreate").number("stream");
		assertThat(calls.only("cuStreamCreate").number("flags")).isEqualTo(CUstream_flags.CU_STREAM_NON_BLOCKING);
		Call pin = calls.only("cuMemHostAlloc");
		assertThat(pin.number("flags")).isEqualTo(JCudaDriver.CU_MEMHOSTALLOC_PORTABLE);
		assertThat(calls.only("cuMemFreeHost").number("pointer")).isEqualTo(pin.number("pointer"));
		Call toDevice = calls.only("cuMemcpyHtoDAsync");
		assertThat(List.of(toDevice.number("target"), toDevice.number("bytes"), toDevice.number("stream")))
			.containsExactly(address + 2048, 256L, handle);
		assertThat(toDevice.text("source.kind")).isEqualTo("pinned");
		Call toHost = calls.only("cuMemcpyDtoHAsync");
		assertThat(List.of(toHost.number("source"), toHost.number("bytes"), toHost.number("stream")))
			.containsExactly(address + 512, 256L, handle);
		assertThat(toHost.text("target.kind")).isEqualTo("pinned");
		Call between = calls.only("cuMemcpyDtoDAsync");
		assertThat(List.of(between.number("source"), between.number("stream"))).containsExactly(address, handle);
		assertThat(between.text("target.kind")).isEqualTo("device");
		Call onStream = calls.only("cuMemsetD8Async");
		assertThat(List.of(onStream.number("target"), onStream.number("value"), onStream.number("count"),
				onStream.number("stream"))).containsExactly(address + 64, 7L, 32L, handle);

		Call event = calls.only("cuEventCreate");
		assertThat(event.number("flags")).isEqualTo(CUevent_flags.CU_EVENT_DISABLE_TIMING);
		long eventHandle = event.number("event");
		assertThat(List.of(calls.only("cuEventRecord").number("event"), calls.only("cuEventRecord").number("stream")))
			.containsExactly(eventHandle, handle);
		assertThat(Stream.of("cuEventQuery", "cuEventSynchronize", "cuEventDestroy")
			.flatMap((name) -> calls.named(name).stream()))
			.isNotEmpty()
			.allSatisfy((call) -> assertThat(call.number("event")).isEqualTo(eventHandle));
		assertThat(calls.named("cuStreamSynchronize")).extracting((call) -> call.number("stream")).contains(handle);
		assertThat(calls.only("cuStreamDestroy").number("stream")).isEqualTo(handle);
	}

	@Test
	void managedMemoryIsAttachedGloballyAndPrefetchedToTheDeviceAndToTheHost() {
		CudaBackend backend = open(0);
		StratifiedMemoryPool unified = pool(backend, MemoryKind.UNIFIED);
		int mark = this.stub.calls().size();
		GpuStream stream = backend.createStream();
		try (PooledBuffer buffer = unified.acquire(16384)) {
			stream.prefetchToDevice(buffer);
			stream.prefetchToHost(buffer);
			stream.synchronize();
		}
		stream.close();
		Recorded calls = this.stub.callsSince(mark);
		assertThat(calls.only("cuMemAllocManaged").number("flags")).isEqualTo(CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL);
		long handle = calls.only("cuStreamCreate").number("stream");
		List<Call> prefetches = calls.named("cuMemPrefetchAsync");
		assertThat(prefetches).extracting((call) -> call.number("device")).containsExactly(0L, -1L);
		assertThat(prefetches).allSatisfy((call) -> {
			assertThat(call.result()).isZero();
			assertThat(call.number("stream")).isEqualTo(handle);
			assertThat(call.text("kind")).isEqualTo("managed");
			assertThat(call.number("bytes")).isEqualTo(16384);
		});
	}

	/**
	 * Each parameter arrives with the bytes the PTX declares of it, little-endian: the buffer's device address (a
	 * block carved out of a larger allocation, so at an offset), then a float, an int, a long and a double. A block
	 * of the stream-ordered pool, whose address the driver answered through JNA, arrives at that address too.
	 */
	@Test
	void kernelArgumentsArriveAsThePtxDeclaresThem() {
		CudaBackend backend = open(0);
		StratifiedMemoryPool device = pool(backend, MemoryKind.DEVICE);
		StratifiedMemoryPool ordered = new StratifiedMemoryPool(backend.streamOrderedAllocator(),
				PoolConfig.builder("async").build());
		this.opened.add(ordered);
		int mark = this.stub.calls().size();
		GpuStream stream = backend.createStream();
		CudaModule module = backend.loadModule(ptx("arguments"));
		CudaKernel kernel = module.kernel("arguments");
		try (PooledBuffer small = device.acquire(256); PooledBuffer buffer = device.acquire(256);
				PooledBuffer block = ordered.acquire(256)) {
			buffer.fill((byte) 0);
			kernel.launch(stream, 3, 128, buffer, 2.5f, 7, 1L << 40, -0.125);
			block.fill((byte) 0);
			kernel.launch(stream, 1, 1, block, 0f, 0, 0L, 0.0);
			stream.synchronize();
		}
		module.close();
		stream.close();
		Recorded calls = this.stub.callsSince(mark);
		List<Call> fills = calls.named("cuMemsetD8");
		long address = fills.get(0).number("target");
		List<Call> launches = calls.named("cuLaunchKernel");
		assertThat(launches.get(1).text("param[0]")).isEqualTo(littleEndian(8, fills.get(1).number("target")));
		assertThat(launches.get(1).text("param[0].kind")).isEqualTo("pooled");
		long stream0 = calls.only("cuStreamCreate").number("stream");
		Call load = calls.only("cuModuleLoadData");
		assertThat(load.text("entry[0]")).isEqualTo("arguments/5");
		assertThat(calls.only("cuModuleGetFunction").text("name")).isEqualTo("arguments");
		Call launch = launches.get(0);
		assertThat(launches).allSatisfy((call) -> assertThat(call.result()).isZero());
		assertThat(List.of(launch.text("function"), launch.text("grid"), launch.text("block"),
				launch.text("sharedBytes"), launch.text("extra")))
			.containsExactly("arguments", "3,1,1", "128,1,1", "0", "(nil)");
		assertThat(launch.number("stream")).isEqualTo(stream0);
		assertThat(List.of(launch.text("param[0]"), launch.text("param[0].kind"), launch.text("param[1]"),
				launch.text("param[2]"), launch.text("param[3]"), launch.text("param[4]")))
			.containsExactly(littleEndian(8, address), "device", littleEndian(4, Float.floatToRawIntBits(2.5f)),
					littleEndian(4, 7), littleEndian(8, 1L << 40), littleEndian(8, Double.doubleToRawLongBits(-0.125)));
		assertThat(calls.only("cuModuleUnload").number("module")).isEqualTo(load.number("module"));
	}

	/**
	 * Two devices that reach each other enable access both ways, each from its own context to the other's, and a
	 * copy between them names both contexts.
	 */
	@Test
	void peersAreEnabledBothWaysAndCopiedBetweenWithEachSidesContext() {
		int mark = this.stub.calls().size();
		CudaBackend first = open(0);
		CudaBackend second = open(1);
		StratifiedMemoryPool firstPool = pool(first, MemoryKind.DEVICE);
		StratifiedMemoryPool secondPool = pool(second, MemoryKind.DEVICE);
		int[] values = { 27, 18, 28, 18, 28 };
		int[] copied = new int[values.length];
		assertThat(first.peerAccess(second)).isTrue();
		GpuStream stream = first.createStream();
		try (PooledBuffer source = firstPool.acquire(4096); PooledBuffer target = secondPool.acquire(4096)) {
			source.fill((byte) 0);
			target.fill((byte) 0);
			source.copyFrom(values);
			stream.copy(source, 0, target, 0, 4L * values.length);
			stream.synchronize();
			target.copyTo(copied);
		}
		stream.close();
		assertThat(copied).containsExactly(values);
		Recorded calls = this.stub.callsSince(mark);
		assertThat(calls.all()).allMatch(StubDriverCallsTest::succeeded, "succeeded");
		long firstContext = contextOf(0, calls);
		long secondContext = contextOf(1, calls);
		assertThat(calls.named("cuDeviceCanAccessPeer"))
			.extracting((call) -> call.number("device") + "->" + call.number("peer") + ":" + call.number("canAccess"))
			.containsExactly("0->1:1", "1->0:1");
		assertThat(calls.named("cuCtxEnablePeerAccess")).extracting((call) -> call.number("peer"))
			.containsExactly(secondContext, firstContext);
		List<Call> fills = calls.named("cuMemsetD8");
		Call copy = calls.only("cuMemcpyPeerAsync");
		assertThat(List.of(copy.number("target"), copy.number("targetContext"), copy.number("source"),
				copy.number("sourceContext"), copy.number("bytes"), copy.number("stream")))
			.containsExactly(fills.get(1).number("target"), secondContext, fills.get(0).number("target"), firstContext,
					4L * values.length, calls.only("cuStreamCreate").number("stream"));
	}

	/**
	 * Every driver call gpumem-core names, through JCuda or through JNA, reaches the stub and succeeds in the flows
	 * above, or, where no public operation of gpumem makes it (a 32-bit fill on a stream), through the
	 * {@link CudaDriver} a user may call.
	 */
	@Test
	void everyDriverCallGpumemNamesIsReceivedAndSucceeds() throws Exception {
		theProbeAsksTheDeviceItNamesInItsOwnContext();
		physicalMemoryIsCreatedMappedAndOpenedWithStructsAsCudaHLaysThemOut(0);
		theStreamOrderedPoolIsCreatedWithZeroedPropertiesAndGetsItsHandlesBack();
		copiesAndFillsReachTheBuffersAddressOnTheirStream();
		managedMemoryIsAttachedGloballyAndPrefetchedToTheDeviceAndToTheHost();
		kernelArgumentsArriveAsThePtxDeclaresThem();
		peersAreEnabledBothWaysAndCopiedBetweenWithEachSidesContext();
		theBusIdIsAskedOfTheOpenedDevice();
		CudaBackend backend = open(0);
		StratifiedMemoryPool device = pool(backend, MemoryKind.DEVICE);
		try (GpuStream stream = backend.createStream(); PooledBuffer buffer = device.acquire(1024)) {
			backend.makeContextCurrent();
			CudaProbe.jcuda().memsetD32(buffer.unwrap(CUdeviceptr.class), 1, 256, stream.unwrap(CUstream.class));
			stream.synchronize();
		}
		device.trim(0);
		StratifiedMemoryPool sleepy = new StratifiedMemoryPool(backend.virtualMemory().allocator(),
				PoolConfig.builder("sleepy").build());
		try (PooledBuffer lent = sleepy.acquire(1024)) {
			sleepy.sleep(SleepMode.OFFLOAD);
			sleepy.wake();
		}
		sleepy.close();
		Set<String> received = new TreeSet<>();
		this.stub.calls().all().stream().filter(StubDriverCallsTest::succeeded).forEach((call) -> received.add(call.name()));
		assertThat(received).containsAll(namedInSources());
	}

	/**
	 * No binding method reads or writes a field its object does not have: the JVM's checker, which aborts where one
	 * does ({@code -Xcheck:jni}: "Wrong field ID passed to JNI" at JCuda's {@code cuMemPoolCreate}, "Field type
	 * (instance) mismatch" at its {@code cuMemSetAccess}), runs every method of the binding once.
	 */
	@Test
	void noBindingMethodTouchesAFieldItsObjectDoesNotHave() throws Exception {
		JvmOfItsOwn.Ended ended = JvmOfItsOwn.plain().withOptions("-Xcheck:jni").run(JniCheckWorkout.class);
		assertThat(ended.output()).doesNotContain("FATAL ERROR in native method")
			.doesNotContain("field ID")
			.doesNotContain("Field type");
		assertThat(ended.exitCode()).as(ended.output()).isZero();
		assertThat(ended.output()).contains("every binding method called");
	}

	/**
	 * With copies that take half a second and one carrier thread, a virtual thread waiting for its copy through
	 * gpumem's stream or event leaves the carrier to another virtual thread meanwhile; waiting in
	 * {@code cuStreamSynchronize} holds it until the copy is done.
	 */
	@Test
	@EnabledForJreRange(min = JRE.JAVA_21, disabledReason = "virtual threads came in Java 21")
	void aVirtualThreadWaitingForTheGpuThroughGpumemLeavesItsCarrierToOthers() throws Exception {
		JvmOfItsOwn.Ended ended = JvmOfItsOwn.plain()
			.withEnvironment(Map.of("GPUMEM_STUB_KERNEL_MICROS", "500000"))
			.withOptions("-Djdk.virtualThreadScheduler.parallelism=1", "-Djdk.virtualThreadScheduler.maxPoolSize=1")
			.run(CarrierWorkout.class);
		assertThat(ended.exitCode()).as(ended.output()).isZero();
		assertThat(ended.output()).contains("stream.synchronize: the other thread ran before the wait returned: true",
				"event.await: the other thread ran before the wait returned: true",
				"cuStreamSynchronize: the other thread ran before the wait returned: false");
	}

	/** The driver calls the CUDA backend's sources name: {@code JCudaDriver.cuX(} and the JNA interface's {@code int cuX(}. */
	private static Set<String> namedInSources() throws IOException {
		Set<String> names = new TreeSet<>();
		try (Stream<Path> sources = Files.list(CUDA_SOURCES)) {
			for (Path source : sources.toList()) {
				Matcher matcher = CALL_NAMED.matcher(Files.readString(source));
				while (matcher.find()) {
					names.add(matcher.group(1));
				}
			}
		}
		assertThat(names).as("the calls named in %s", CUDA_SOURCES.toAbsolutePath()).contains("cuMemAlloc",
				"cuMemCreate", "cuMemSetAccess", "cuMemPoolCreate", "cuLaunchKernel");
		return names;
	}

	/** Whether the driver answered the call as done: success, or, to an event's query, not done yet. */
	private static boolean succeeded(Call call) {
		return call.result() == 0 || (call.name().equals("cuEventQuery") && call.result() == CudaException.NOT_READY);
	}

	private static void assertPinnedOn(int device, Call call) {
		assertThat(List.of(call.number("prop.type"), call.number("prop.requestedHandleTypes"),
				call.number("prop.location.type"), call.number("prop.location.id"), call.number("prop.win32HandleMetaData"),
				call.number("prop.allocFlags.compressionType"), call.number("prop.allocFlags.gpuDirectRDMACapable"),
				call.number("prop.allocFlags.usage")))
			.as("%s", call)
			.containsExactly((long) CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED,
					(long) CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_NONE,
					(long) CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, (long) device, 0L, 0L, 0L, 0L);
		assertThat(call.text("prop.allocFlags.reserved")).as("every reserved byte zero").isEqualTo("00000000");
	}

	private static long contextOf(int device, Recorded calls) {
		return calls.named("cuDevicePrimaryCtxRetain")
			.stream()
			.filter((call) -> call.number("device") == device)
			.findFirst()
			.orElseThrow()
			.number("context");
	}

	private CudaBackend open(int device) {
		CudaBackend backend = CudaBackend.open(device);
		this.opened.add(backend);
		return backend;
	}

	private StratifiedMemoryPool pool(CudaBackend backend, MemoryKind kind) {
		StratifiedMemoryPool pool = new StratifiedMemoryPool(backend.allocator(kind),
				PoolConfig.builder(kind.name().toLowerCase() + backend.deviceId()).build());
		this.opened.add(pool);
		return pool;
	}

	private static String littleEndian(int bytes, long value) {
		ByteBuffer buffer = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(value);
		return HexFormat.of().formatHex(buffer.array(), 0, bytes);
	}

	private static byte[] ptx(String name) {
		try (InputStream in = StubDriverCallsTest.class.getResourceAsStream("/kernels/" + name + ".ptx")) {
			return in.readAllBytes();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
