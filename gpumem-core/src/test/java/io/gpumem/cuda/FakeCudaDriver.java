package io.gpumem.cuda;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.gpumem.memory.ByteBufferAccess;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.MemoryInfo;

/**
 * A CUDA driver in Java for tests, as strict as CUDA's documented rules allow: real memory in direct
 * buffers, a capacity that refuses allocations as a card does, a context current per thread (every call
 * that needs one fails with {@code CUDA_ERROR_INVALID_CONTEXT} without it), and stream work that runs
 * as late as CUDA allows, so that a test passes on it only where it would pass on a real driver.
 * <p>
 * The rules, with the CUDA Driver API documentation's words ("Stream synchronization behavior", "API
 * synchronization behavior", {@code cuStreamCreate}, {@code cuMemFree}):
 * <ul>
 * <li><b>Streams run their work in issue order, asynchronously to the host.</b> The fake defers it until
 * something waits for it: {@code cuStreamSynchronize}, {@code cuEventSynchronize} of an event recorded
 * after it, a call that synchronizes the device, or a synchronous copy to pageable memory. Nothing runs in
 * the background, as on a GPU busy with other work; {@link #progressingWhenPolled()} makes a GPU that gets to its
 * work in the end, for waits that poll.</li>
 * <li><b>The legacy default stream</b> ({@code null}) "synchronizes with all other blocking streams in the
 * same context"; a stream created with {@code CU_STREAM_NON_BLOCKING} "may run concurrently with work in
 * stream 0 (the NULL stream), and the created stream should perform no implicit synchronization with stream
 * 0". gpumem creates only non-blocking streams ({@link #createStream()}); {@link #createBlockingStream()}
 * makes the other kind, to test the rule.</li>
 * <li><b>The synchronous memsets</b> ({@code cuMemsetD8}, {@code cuMemsetD32}) "are asynchronous with
 * respect to the host except when the target is pinned host memory or a Unified Memory region": device
 * memsets are work on the legacy default stream.</li>
 * <li><b>{@code cuMemcpyHtoD} from pageable memory</b> "will return once the pageable buffer has been
 * copied to the staging memory for DMA transfer to device memory, but the DMA to final destination may not
 * have completed": the fake copies the array aside and enqueues the write on the legacy stream.
 * {@code cuMemcpyDtoH} to pageable memory "will return only once the copy has completed": the legacy
 * stream's work (and the blocking streams' before it) runs first.</li>
 * <li><b>Events</b> complete when the work captured by their record has run; querying one runs nothing.</li>
 * <li><b>{@code cuMemFree}</b> synchronizes the device: all pending work runs before the memory goes.</li>
 * <li><b>Stream-ordered pools</b> ({@code cuMemPoolCreate}, {@code cuMemAllocFromPoolAsync},
 * {@code cuMemFreeAsync}, {@code cuMemPoolTrimTo}): a pool reserves device memory as its allocations need
 * it and keeps what they free. {@code cuMemFreeAsync} is stream work: the block is free once the stream
 * has run it; an allocation on the same stream may take it before ("memory can be reused in stream
 * order"), one on another stream only after. The pool's release threshold is 0, the default JCuda cannot
 * change: "the allocator will try to release memory back to the OS on the next call to stream, event or
 * context synchronize", so every synchronization of the device's work releases every free block, as
 * {@code cuMemPoolTrimTo} releases them down to its target. As CUDA 13's driver does (tried on an H100),
 * {@code cuMemFree} takes a pool's block back to its pool once all work has run, and {@code cuMemFreeAsync} takes a
 * {@code cuMemAlloc} block, freed once the stream reaches it; either refuses a pointer inside a block.</li>
 * <li><b>Kernels</b>: {@code cuModuleLoadData} reads the PTX's {@code .entry} names and parameter types;
 * a launch runs the Java body bound to the entry's name with {@link #kernel(String, FakeKernel)}, as stream
 * work, its arguments checked against the PTX parameters ({@code .u64} a device pointer or a long,
 * {@code .u32}/{@code .s32} an int, {@code .f32} a float, {@code .f64} a double).</li>
 * <li><b>Virtual memory</b> ({@code cuMemAddressReserve}, {@code cuMemCreate}, {@code cuMemMap},
 * {@code cuMemSetAccess}, {@code cuMemUnmap}, {@code cuMemRelease}, {@code cuMemAddressFree}; {@link FakeAddressRange}):
 * sizes and offsets are whole granules of {@value #GRANULARITY} bytes; a reserved range holds no memory and
 * {@code cuMemCreate} charges the capacity; a copy or memset into a mapping whose access is not set is
 * {@code CUDA_ERROR_INVALID_VALUE}, and a kernel reaching one, or past the mapped bytes, faults the context;
 * {@code cuMemUnmap} takes whole mappings only, {@code cuMemAddressFree} a range with nothing mapped; a handle
 * released while mapped keeps its memory until unmapped. The fake reserves at most 2 GiB at once.</li>
 * <li><b>A faulting kernel poisons the context</b>: a body that reaches outside its memory (an
 * {@link IndexOutOfBoundsException}) is {@code CUDA_ERROR_ILLEGAL_ADDRESS}, reported by the call that ran the
 * work; then, as CUDA's documentation says, "any further CUDA work will return the same error": every later
 * call in that device's context fails with it.</li>
 * </ul>
 * Work runs on the thread that waits for it, one item at a time for the whole device.
 * <p>
 * <b>Several devices</b> ({@link #devices(int)}): each has its primary context, capacity, legacy stream
 * and memory. A call reaches only the memory and streams of the current context's device, or of a peer
 * whose access the current context enabled ({@code cuCtxEnablePeerAccess}); pinned memory is portable,
 * reachable from every context. {@code cuMemcpyPeerAsync} is stricter than CUDA, which stages the copy
 * itself when no access is enabled: the fake refuses it, so that a test passes only where gpumem copies
 * peer to peer between devices it enabled access between.
 */
public final class FakeCudaDriver implements CudaDriver {

	static final int INVALID_VALUE = 1;

	static final int INVALID_PTX = 218;

	static final int NOT_FOUND = 500;

	static final int INVALID_HANDLE = 400;

	static final int PEER_ACCESS_UNSUPPORTED = 217;

	static final int NOT_SUPPORTED = 801;

	static final int ILLEGAL_ADDRESS = 700;

	/** The allocation granularity of the virtual-memory calls: 2 MiB, as on current GPUs. */
	static final long GRANULARITY = 2L << 20;

	final long capacity;

	volatile int driverVersion = 12080;

	volatile int deviceCount = 1;

	volatile int initResult;

	volatile int retainResult;

	volatile boolean concurrentManagedAccess = true;

	volatile boolean peerAccessSupported = true;

	volatile boolean memoryPoolsSupported = true;

	volatile boolean virtualMemorySupported = true;

	/** Runs on the calling thread as {@code cuMemAlloc}, {@code cuMemCreate} and {@code cuMemUnmap} begin. */
	private volatile Consumer<String> pause = (call) -> {
	};

	/** Held by the virtual-memory calls, which change ranges and handles together. */
	private final Object mappings = new Object();

	private final AtomicInteger refusals = new AtomicInteger();

	private final Map<Integer, AtomicLong> used = new ConcurrentHashMap<>();

	/** Pairs of devices whose first may reach the second's memory, as {@code cuCtxEnablePeerAccess} enabled. */
	private final Set<List<Integer>> peerAccess = ConcurrentHashMap.newKeySet();

	private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

	private final Set<Block> live = ConcurrentHashMap.newKeySet();

	private final AtomicInteger retained = new AtomicInteger();

	private final Map<String, FakeKernel> kernels = new ConcurrentHashMap<>();

	/** The device: stream work runs holding it, one item at a time. */
	private final Object engine = new Object();

	private final Map<Integer, FakeStream> legacy = new ConcurrentHashMap<>();

	/** The blocking streams, which the legacy stream synchronizes with (weakly held, as streams are dropped). */
	private final Set<FakeStream> blocking = Collections.newSetFromMap(new WeakHashMap<>());

	private final Set<FakeStream> streams = Collections.newSetFromMap(new WeakHashMap<>());

	private final Map<Integer, FakeContext> contexts = new ConcurrentHashMap<>();

	private final Set<FakeMemoryPool> pools = ConcurrentHashMap.newKeySet();

	private final ThreadLocal<Object> current = new ThreadLocal<>();

	/** The call each thread is making, which reports a fault of the work it runs. */
	private final ThreadLocal<String> calling = new ThreadLocal<>();

	/** The devices whose context a fault left unusable: every later call in it fails with the fault's error. */
	private final Set<Integer> poisoned = ConcurrentHashMap.newKeySet();

	private volatile boolean progressingWhenPolled;

	public FakeCudaDriver(long capacity) {
		this.capacity = capacity;
	}

	/** Makes the driver report {@code count} devices, each of the capacity given at construction. */
	public FakeCudaDriver devices(int count) {
		this.deviceCount = count;
		return this;
	}

	/** Makes {@code cuDeviceCanAccessPeer} answer no for every pair, as on devices without NVLink or P2P over PCIe. */
	public FakeCudaDriver withoutPeerAccess() {
		this.peerAccessSupported = false;
		return this;
	}

	/**
	 * A fake whose GPU gets to its work while it is polled: a {@code cuEventQuery} of an incomplete event runs the
	 * work before it and answers not ready, so that a wait that polls (a virtual thread's) ends, one poll later than it
	 * could. Without it, work runs only when something waits for it in the driver.
	 */
	public FakeCudaDriver progressingWhenPolled() {
		this.progressingWhenPolled = true;
		return this;
	}

	/**
	 * Makes the devices report no virtual memory management, and refuse every virtual-memory call, as devices whose
	 * {@code CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED} is 0.
	 */
	public FakeCudaDriver withoutVirtualMemory() {
		this.virtualMemorySupported = false;
		return this;
	}

	/**
	 * Makes {@code cuMemAlloc}, {@code cuMemCreate} and {@code cuMemUnmap} take the time given, spent on the calling
	 * thread outside every lock of the fake, as a real driver's call spends it in the kernel: what allocating and
	 * freeing a segment, growing by a granule and unmapping one take on a GPU, so that a caller who holds a lock across
	 * them makes others wait as long as it would there.
	 */
	public FakeCudaDriver withMemoryCallTimes(Duration alloc, Duration create, Duration unmap) {
		return pausingMemoryCalls((call) -> spend(switch (call) {
			case "cuMemAlloc" -> alloc;
			case "cuMemCreate" -> create;
			case "cuMemUnmap" -> unmap;
			default -> Duration.ZERO;
		}));
	}

	/**
	 * Makes {@code cuMemAlloc}, {@code cuMemCreate}, {@code cuMemUnmap} and the copies ({@code cuMemcpyHtoD},
	 * {@code cuMemcpyDtoH} and the {@code Async} ones but the peers') run {@code pause} with the call's name as they
	 * begin, on the calling thread outside every lock of the fake: a test holds a call there to see what other
	 * threads can do, or refuses it by throwing.
	 */
	public FakeCudaDriver pausingMemoryCalls(Consumer<String> pause) {
		this.pause = pause;
		return this;
	}

	/**
	 * Makes {@code cuMemPoolCreate} fail with {@code CUDA_ERROR_NOT_SUPPORTED}, as on devices whose
	 * {@code CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED} is 0.
	 */
	public FakeCudaDriver withoutMemoryPools() {
		this.memoryPoolsSupported = false;
		return this;
	}

	/**
	 * Binds a PTX entry point name to a Java body of the same arithmetic: modules whose PTX has an entry of
	 * that name run it when that kernel is launched.
	 */
	public FakeCudaDriver kernel(String name, FakeKernel body) {
		this.kernels.put(name, body);
		return this;
	}

	/** Makes the next {@code count} allocations fail with {@code CUDA_ERROR_OUT_OF_MEMORY}. */
	void refuseNextAllocations(int count) {
		this.refusals.set(count);
	}

	/** How many calls the driver received, of every kind. */
	public int totalCalls() {
		return this.calls.values().stream().mapToInt(AtomicInteger::get).sum();
	}

	/** How many times a driver call was made. */
	public int calls(String call) {
		AtomicInteger count = this.calls.get(call);
		return (count != null) ? count.get() : 0;
	}

	/** Primary contexts retained and not yet released, over every device. */
	public int retainedContexts() {
		return this.retained.get();
	}

	long usedBytes() {
		return this.used.values().stream().mapToLong(AtomicLong::get).sum();
	}

	/** Device memory allocated on one device. */
	public long usedBytes(int device) {
		return used(device).get();
	}

	/** Device memory the stream-ordered pools hold and their allocations do not use: what a release would give back. */
	long poolFreeBytes() {
		synchronized (this.engine) {
			return this.pools.stream().mapToLong(FakeMemoryPool::freeBytes).sum();
		}
	}

	/** Times a stream-ordered pool reserved device memory for an allocation: the pool's own fresh allocations. */
	int poolReservations() {
		return calls("pool reservation");
	}

	public int liveAllocations() {
		return this.live.size();
	}

	/** A stream that synchronizes with the legacy default stream, which gpumem never creates. */
	Object createBlockingStream() {
		FakeStream stream = new FakeStream(requireContext("cuStreamCreate"), true);
		synchronized (this.engine) {
			this.blocking.add(stream);
			this.streams.add(stream);
		}
		return stream;
	}

	@Override
	public void init() {
		count("cuInit");
		fail("cuInit", this.initResult);
	}

	@Override
	public int driverVersion() {
		return this.driverVersion;
	}

	@Override
	public int bindingVersion() {
		return 12000;
	}

	@Override
	public int deviceCount() {
		return this.deviceCount;
	}

	@Override
	public String deviceName(int device) {
		checkDevice(device, "cuDeviceGetName");
		return "Fake GPU " + device;
	}

	@Override
	public String pciBusId(int device) {
		checkDevice(device, "cuDeviceGetPCIBusId");
		return String.format("0000:%02x:00.0", device + 1);
	}

	@Override
	public int computeCapability(int device) {
		checkDevice(device, "cuDeviceGetAttribute");
		return 90;
	}

	@Override
	public boolean concurrentManagedAccess(int device) {
		return this.concurrentManagedAccess;
	}

	@Override
	public boolean virtualMemorySupported(int device) {
		return this.virtualMemorySupported;
	}

	@Override
	public long allocationGranularity(int device) {
		requireVirtualMemory("cuMemGetAllocationGranularity");
		return GRANULARITY;
	}

	@Override
	public Object reserveAddresses(long bytes) {
		String call = "cuMemAddressReserve";
		int device = requireVirtualMemory(call);
		requireSize(call, bytes);
		if (bytes > Integer.MAX_VALUE) {
			fail(call, INVALID_VALUE);
		}
		FakeAddressRange range = new FakeAddressRange(bytes);
		Block block = new Block(range.memory, device, null, range);
		this.live.add(block);
		return new FakePointer(block, 0);
	}

	@Override
	public void freeAddresses(Object base, long bytes) {
		String call = "cuMemAddressFree";
		requireVirtualMemory(call);
		FakePointer at = (FakePointer) base;
		synchronized (this.mappings) {
			FakeAddressRange range = at.block.range;
			if (range == null || at.offset != 0 || bytes != range.bytes || range.isMapped()
					|| !this.live.remove(at.block)) {
				fail(call, INVALID_VALUE);
			}
		}
	}

	@Override
	public Object createPhysical(int device, long bytes) {
		String call = "cuMemCreate";
		requireVirtualMemory(call);
		requireSize(call, bytes);
		this.pause.accept(call);
		if (this.refusals.getAndUpdate((n) -> Math.max(0, n - 1)) > 0) {
			fail(call, CudaException.OUT_OF_MEMORY);
		}
		charge(call, device, bytes);
		return new FakeAddressRange.Physical(device, bytes);
	}

	@Override
	public void releasePhysical(Object handle) {
		String call = "cuMemRelease";
		requireVirtualMemory(call);
		FakeAddressRange.Physical physical = (FakeAddressRange.Physical) handle;
		synchronized (this.mappings) {
			if (physical.released) {
				fail(call, INVALID_VALUE);
			}
			physical.released = true;
			giveBackIfGone(physical);
		}
	}

	@Override
	public void map(Object address, long bytes, Object handle) {
		String call = "cuMemMap";
		requireVirtualMemory(call);
		FakePointer at = (FakePointer) address;
		FakeAddressRange.Physical physical = (FakeAddressRange.Physical) handle;
		requireGranules(call, at.offset);
		requireGranules(call, bytes);
		synchronized (this.mappings) {
			if (at.block.range == null || !this.live.contains(at.block) || physical.released
					|| bytes != physical.bytes || !at.block.range.map(at.offset, physical)) {
				fail(call, INVALID_VALUE);
			}
		}
	}

	@Override
	public void setAccess(Object address, long bytes, int device) {
		String call = "cuMemSetAccess";
		requireVirtualMemory(call);
		FakePointer at = (FakePointer) address;
		synchronized (this.mappings) {
			if (at.block.range == null || device != at.block.ordinal || !at.block.range.setAccess(at.offset, bytes)) {
				fail(call, INVALID_VALUE);
			}
		}
	}

	@Override
	public void unmap(Object address, long bytes) {
		String call = "cuMemUnmap";
		requireVirtualMemory(call);
		this.pause.accept(call);
		FakePointer at = (FakePointer) address;
		synchronized (this.mappings) {
			List<FakeAddressRange.Physical> unmapped = (at.block.range != null) ? at.block.range.unmap(at.offset, bytes)
					: null;
			if (unmapped == null) {
				fail(call, INVALID_VALUE);
			}
			unmapped.forEach(this::giveBackIfGone);
		}
	}

	/** Gives a handle's memory back to its device once it is released and mapped nowhere. */
	private void giveBackIfGone(FakeAddressRange.Physical physical) {
		if (physical.gone()) {
			used(physical.device).addAndGet(-physical.bytes);
		}
	}

	/** Counts a virtual-memory call, refused where the device has no virtual-memory management; its device. */
	private int requireVirtualMemory(String call) {
		int device = requireContext(call);
		if (!this.virtualMemorySupported) {
			fail(call, NOT_SUPPORTED);
		}
		return device;
	}

	/** Keeps the calling thread busy for {@code time}, as a call into the kernel would. */
	private static void spend(Duration time) {
		for (long start = System.nanoTime(); System.nanoTime() - start < time.toNanos();) {
			Thread.onSpinWait();
		}
	}

	/** Refuses an offset of the virtual-memory calls that is not a whole number of granules. */
	private static void requireGranules(String call, long bytes) {
		if (bytes < 0 || bytes % GRANULARITY != 0) {
			fail(call, INVALID_VALUE);
		}
	}

	/** Refuses a size of the virtual-memory calls that is not a positive whole number of granules. */
	private static void requireSize(String call, long bytes) {
		requireGranules(call, bytes);
		if (bytes == 0) {
			fail(call, INVALID_VALUE);
		}
	}

	@Override
	public Object retainPrimaryContext(int device) {
		count("cuDevicePrimaryCtxRetain");
		checkDevice(device, "cuDevicePrimaryCtxRetain");
		fail("cuDevicePrimaryCtxRetain", this.retainResult);
		this.retained.incrementAndGet();
		return this.contexts.computeIfAbsent(device, FakeContext::new);
	}

	@Override
	public void releasePrimaryContext(int device) {
		count("cuDevicePrimaryCtxRelease");
		checkDevice(device, "cuDevicePrimaryCtxRelease");
		this.retained.decrementAndGet();
	}

	@Override
	public void setCurrentContext(Object context) {
		count("cuCtxSetCurrent");
		this.current.set(context);
	}

	@Override
	public boolean canAccessPeer(int device, int peer) {
		count("cuDeviceCanAccessPeer");
		checkDevice(device, "cuDeviceCanAccessPeer");
		checkDevice(peer, "cuDeviceCanAccessPeer");
		return this.peerAccessSupported && device != peer;
	}

	@Override
	public void enablePeerAccess(Object peerContext) {
		int device = requireContext("cuCtxEnablePeerAccess");
		int peer = ((FakeContext) peerContext).device();
		if (!canAccessPeer(device, peer)) {
			fail("cuCtxEnablePeerAccess", PEER_ACCESS_UNSUPPORTED);
		}
		if (!this.peerAccess.add(List.of(device, peer))) {
			fail("cuCtxEnablePeerAccess", CudaException.PEER_ACCESS_ALREADY_ENABLED);
		}
	}

	@Override
	public MemoryInfo memoryInfo() {
		int device = requireContext("cuMemGetInfo");
		return new MemoryInfo(this.capacity - used(device).get(), this.capacity);
	}

	@Override
	public Object allocateDevice(long bytes) {
		this.pause.accept("cuMemAlloc");
		return allocate("cuMemAlloc", bytes, true);
	}

	@Override
	public Object createMemoryPool(int device) {
		String call = "cuMemPoolCreate";
		requireContext(call);
		checkDevice(device, call);
		if (!this.memoryPoolsSupported) {
			fail(call, NOT_SUPPORTED);
		}
		FakeMemoryPool pool = new FakeMemoryPool(device);
		this.pools.add(pool);
		return pool;
	}

	@Override
	public Object allocateFromPool(Object pool, long bytes, Object stream) {
		String call = "cuMemAllocFromPoolAsync";
		FakeMemoryPool from = (FakeMemoryPool) pool;
		FakeStream on = stream(call, requireContext(call), stream);
		if (!this.pools.contains(from) || on.device != from.device || bytes <= 0) {
			fail(call, INVALID_VALUE);
		}
		if (this.refusals.getAndUpdate((n) -> Math.max(0, n - 1)) > 0) {
			fail(call, CudaException.OUT_OF_MEMORY);
		}
		Block block;
		synchronized (this.engine) {
			block = from.reuse(bytes, on);
		}
		if (block == null) {
			charge(call, from.device, bytes);
			count("pool reservation");
			block = new Block(ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder()), from.device, from);
			synchronized (this.engine) {
				from.reserved += bytes;
			}
		}
		this.live.add(block);
		return new FakePointer(block, 0);
	}

	@Override
	public void freeAsync(Object pointer, Object stream) {
		String call = "cuMemFreeAsync";
		FakeStream on = stream(call, requireContext(call), stream);
		FakePointer freed = (FakePointer) pointer;
		Block block = freed.block;
		if (freed.offset != 0 || block.ordinal < 0 || block.range != null || !this.live.remove(block)) {
			fail(call, INVALID_VALUE);
		}
		if (block.pool == null) {
			enqueue(call, on, () -> used(block.ordinal).addAndGet(-block.memory.capacity()));
			return;
		}
		synchronized (this.engine) {
			block.pendingOn = on;
			block.pool.free.add(block);
		}
		enqueue(call, on, () -> {
			block.pendingOn = null;
			if (!this.pools.contains(block.pool)) {
				release(block.pool, 0);
			}
		});
	}

	@Override
	public void trimMemoryPool(Object pool, long keepBytes) {
		String call = "cuMemPoolTrimTo";
		requireContext(call);
		FakeMemoryPool trimmed = (FakeMemoryPool) pool;
		if (!this.pools.contains(trimmed)) {
			fail(call, INVALID_VALUE);
		}
		synchronized (this.engine) {
			release(trimmed, keepBytes);
		}
	}

	@Override
	public void destroyMemoryPool(Object pool) {
		String call = "cuMemPoolDestroy";
		requireContext(call);
		FakeMemoryPool destroyed = (FakeMemoryPool) pool;
		if (!this.pools.remove(destroyed)) {
			fail(call, INVALID_VALUE);
		}
		synchronized (this.engine) {
			this.streams.forEach(this::runAll);
			release(destroyed, 0);
		}
	}

	@Override
	public Object allocateManaged(long bytes) {
		return allocate("cuMemAllocManaged", bytes, true);
	}

	@Override
	public void freeDevice(Object pointer) {
		free("cuMemFree", pointer, true);
	}

	@Override
	public Object allocatePinned(long bytes) {
		return allocate("cuMemHostAlloc", bytes, false);
	}

	@Override
	public ByteBuffer pinnedView(Object pointer, long bytes) {
		FakePointer host = (FakePointer) pointer;
		return host.memory().slice(host.offset, (int) bytes).order(ByteOrder.nativeOrder());
	}

	@Override
	public void freePinned(Object pointer) {
		free("cuMemFreeHost", pointer, false);
	}

	@Override
	public Object offset(Object pointer, long bytes) {
		FakePointer base = (FakePointer) pointer;
		return new FakePointer(base.block, base.offset + (int) bytes);
	}

	@Override
	public void copyArrayToDevice(Object device, Object array, long arrayByteOffset, long bytes) {
		ElementType type = ElementType.of(array.getClass().getComponentType());
		count("cuMemcpyHtoD");
		this.pause.accept("cuMemcpyHtoD");
		ByteBuffer target = region("cuMemcpyHtoD", device, bytes);
		ByteBuffer staged = ByteBuffer.allocate((int) bytes).order(ByteOrder.nativeOrder());
		ByteBufferAccess.copyIn(staged, 0, array, (int) (arrayByteOffset / type.bytes()), (int) (bytes / type.bytes()),
				type);
		enqueue("cuMemcpyHtoD", null, () -> target.put(0, staged, 0, (int) bytes));
	}

	@Override
	public void copyDeviceToArray(Object array, long arrayByteOffset, Object device, long bytes) {
		ElementType type = ElementType.of(array.getClass().getComponentType());
		count("cuMemcpyDtoH");
		this.pause.accept("cuMemcpyDtoH");
		ByteBuffer source = region("cuMemcpyDtoH", device, bytes);
		synchronized (this.engine) {
			int current = currentDevice("cuMemcpyDtoH");
			runAll(legacy(current));
			released(current);
		}
		ByteBufferAccess.copyOut(source, 0, array, (int) (arrayByteOffset / type.bytes()), (int) (bytes / type.bytes()),
				type);
	}

	@Override
	public void copyHostToDeviceAsync(Object device, Object pinned, long bytes, Object stream) {
		copyAsync("cuMemcpyHtoDAsync", device, pinned, bytes, stream);
	}

	@Override
	public void copyDeviceToHostAsync(Object pinned, Object device, long bytes, Object stream) {
		copyAsync("cuMemcpyDtoHAsync", pinned, device, bytes, stream);
	}

	@Override
	public void copyDeviceToDeviceAsync(Object target, Object source, long bytes, Object stream) {
		copyAsync("cuMemcpyDtoDAsync", target, source, bytes, stream);
	}

	@Override
	public void copyPeerAsync(Object target, Object targetContext, Object source, Object sourceContext, long bytes,
			Object stream) {
		String call = "cuMemcpyPeerAsync";
		requireContext(call);
		int to = ((FakeContext) targetContext).device();
		int from = ((FakeContext) sourceContext).device();
		if (((FakePointer) target).block.ordinal != to || ((FakePointer) source).block.ordinal != from
				|| !(this.peerAccess.contains(List.of(to, from)) || this.peerAccess.contains(List.of(from, to)))) {
			fail(call, INVALID_VALUE);
		}
		ByteBuffer into = memory(call, target, bytes);
		ByteBuffer out = memory(call, source, bytes);
		enqueue(call, stream, () -> into.put(0, out, 0, (int) bytes));
	}

	@Override
	public void memsetD8(Object device, byte value, long count, Object stream) {
		String call = (stream != null) ? "cuMemsetD8Async" : "cuMemsetD8";
		count(call);
		ByteBuffer target = region(call, device, count);
		enqueue(call, stream, () -> ByteBufferAccess.fill(target, 0, count, value));
	}

	@Override
	public void memsetD32(Object device, int value, long count, Object stream) {
		String call = (stream != null) ? "cuMemsetD32Async" : "cuMemsetD32";
		count(call);
		ByteBuffer target = region(call, device, count * 4);
		enqueue(call, stream, () -> ByteBufferAccess.fillInts(target, 0, count, value));
	}

	@Override
	public void prefetch(Object pointer, long bytes, int device, Object stream) {
		count("cuMemPrefetchAsync");
		region("cuMemPrefetchAsync", pointer, bytes);
		enqueue("cuMemPrefetchAsync", stream, () -> {
		});
	}

	@Override
	public Object createStream() {
		FakeStream stream = new FakeStream(requireContext("cuStreamCreate"), false);
		synchronized (this.engine) {
			this.streams.add(stream);
		}
		return stream;
	}

	@Override
	public void synchronizeContext() {
		int device = requireContext("cuCtxSynchronize");
		synchronized (this.engine) {
			List<FakeStream> all = new ArrayList<>(this.streams);
			all.add(legacy(device));
			for (FakeStream stream : all) {
				if (stream.device == device) {
					runAll(stream);
				}
			}
			released(device);
		}
	}

	@Override
	public void synchronizeStream(Object stream) {
		FakeStream synchronizing = stream("cuStreamSynchronize", requireContext("cuStreamSynchronize"), stream);
		synchronized (this.engine) {
			runAll(synchronizing);
			released(synchronizing.device);
		}
	}

	@Override
	public void destroyStream(Object stream) {
		requireContext("cuStreamDestroy");
	}

	@Override
	public Object createEvent() {
		requireContext("cuEventCreate");
		return new FakeEvent();
	}

	@Override
	public void recordEvent(Object event, Object stream) {
		FakeStream recording = stream("cuEventRecord", requireContext("cuEventRecord"), stream);
		FakeEvent recorded = (FakeEvent) event;
		synchronized (this.engine) {
			recorded.stream = recording;
			recorded.sequence = recorded.stream.enqueued;
		}
	}

	@Override
	public boolean queryEvent(Object event) {
		requireContext("cuEventQuery");
		FakeEvent recorded = (FakeEvent) event;
		synchronized (this.engine) {
			if (recorded.stream == null || recorded.stream.completed >= recorded.sequence) {
				return true;
			}
			if (this.progressingWhenPolled) {
				runUntil(recorded.stream, recorded.sequence);
				released(recorded.stream.device);
			}
			return false;
		}
	}

	@Override
	public void synchronizeEvent(Object event) {
		requireContext("cuEventSynchronize");
		FakeEvent recorded = (FakeEvent) event;
		synchronized (this.engine) {
			if (recorded.stream != null) {
				runUntil(recorded.stream, recorded.sequence);
				released(recorded.stream.device);
			}
		}
	}

	@Override
	public void destroyEvent(Object event) {
		requireContext("cuEventDestroy");
	}

	@Override
	public Object loadModule(byte[] image) {
		requireContext("cuModuleLoadData");
		if (image.length == 0 || image[image.length - 1] != 0) {
			fail("cuModuleLoadData", INVALID_PTX);
		}
		String ptx = new String(image, 0, image.length - 1, StandardCharsets.US_ASCII);
		if (!ptx.contains(".version") || !ptx.contains(".target")) {
			fail("cuModuleLoadData", INVALID_PTX);
		}
		Map<String, List<String>> entries = new LinkedHashMap<>();
		Matcher entry = ENTRY.matcher(ptx);
		while (entry.find()) {
			List<String> parameters = new ArrayList<>();
			Matcher parameter = PARAMETER.matcher(entry.group(2));
			while (parameter.find()) {
				parameters.add(parameter.group(1));
			}
			entries.put(entry.group(1), parameters);
		}
		return new FakeModule(entries);
	}

	@Override
	public Object function(Object module, String name) {
		String call = "cuModuleGetFunction";
		requireContext(call);
		List<String> parameters = ((FakeModule) module).entries.get(name);
		if (parameters == null) {
			fail(call, NOT_FOUND);
		}
		FakeKernel body = this.kernels.get(name);
		if (body == null) {
			throw new IllegalStateException("the fake driver has no Java body for kernel " + name
					+ ": bind one with FakeCudaDriver.kernel");
		}
		return new FakeFunction(name, parameters, body);
	}

	@Override
	public void launchKernel(Object function, int blocks, int threadsPerBlock, int sharedBytes, Object stream,
			Object[] arguments) {
		requireContext("cuLaunchKernel");
		FakeFunction kernel = (FakeFunction) function;
		if (blocks < 1 || threadsPerBlock < 1 || threadsPerBlock > 1024 || arguments.length != kernel.parameters.size()) {
			fail("cuLaunchKernel", INVALID_VALUE);
		}
		for (int i = 0; i < arguments.length; i++) {
			if (!accepts(kernel.parameters.get(i), arguments[i])) {
				fail("cuLaunchKernel", INVALID_VALUE);
			}
			if (arguments[i] instanceof FakePointer pointer) {
				region("cuLaunchKernel", pointer, 0);
			}
		}
		FakeLaunch launch = new FakeLaunch(blocks, threadsPerBlock, arguments.clone());
		enqueue("cuLaunchKernel", stream, () -> kernel.body.run(launch));
	}

	@Override
	public void unloadModule(Object module) {
		requireContext("cuModuleUnload");
	}

	private static boolean accepts(String type, Object argument) {
		return switch (type) {
			case "u64", "s64", "b64" -> argument instanceof FakePointer pointer && pointer.block.ordinal >= 0
					|| argument instanceof Long;
			case "u32", "s32", "b32" -> argument instanceof Integer;
			case "f32" -> argument instanceof Float;
			case "f64" -> argument instanceof Double;
			default -> false;
		};
	}

	private Object allocate(String call, long bytes, boolean device) {
		int ordinal = requireContext(call);
		if (this.refusals.getAndUpdate((n) -> Math.max(0, n - 1)) > 0) {
			fail(call, CudaException.OUT_OF_MEMORY);
		}
		if (device) {
			charge(call, ordinal, bytes);
		}
		Block block = new Block(ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder()),
				device ? ordinal : -1, null);
		this.live.add(block);
		return new FakePointer(block, 0);
	}

	/** Takes {@code bytes} of the device's capacity, or fails with {@code CUDA_ERROR_OUT_OF_MEMORY}. */
	private void charge(String call, int device, long bytes) {
		AtomicLong charged = used(device);
		long now;
		do {
			now = charged.get();
			if (bytes > this.capacity - now) {
				fail(call, CudaException.OUT_OF_MEMORY);
			}
		}
		while (!charged.compareAndSet(now, now + bytes));
	}

	/** Gives the pool's free blocks whose free has run back to the device until it holds at most {@code keepBytes}; holds the engine. */
	private void release(FakeMemoryPool pool, long keepBytes) {
		for (var it = pool.free.iterator(); it.hasNext() && pool.reserved > keepBytes;) {
			Block block = it.next();
			if (block.pendingOn == null) {
				it.remove();
				pool.reserved -= block.memory.capacity();
				used(pool.device).addAndGet(-block.memory.capacity());
			}
		}
	}

	/** What a synchronization does after running work: the device's pools release their free memory (threshold 0); holds the engine. */
	private void released(int device) {
		this.pools.stream().filter((pool) -> pool.device == device).forEach((pool) -> release(pool, 0));
	}

	private void free(String call, Object pointer, boolean device) {
		int ordinal = requireContext(call);
		FakePointer freed = (FakePointer) pointer;
		Block block = freed.block;
		synchronized (this.engine) {
			this.streams.forEach(this::runAll);
			this.legacy.values().forEach(this::runAll);
			int owner = device ? ordinal : -1;
			if (freed.offset != 0 || block.ordinal != owner || block.range != null || !this.live.remove(block)) {
				fail(call, INVALID_VALUE);
			}
			if (block.pool != null) {
				block.pool.free.add(block);
				if (!this.pools.contains(block.pool)) {
					release(block.pool, 0);
				}
			}
			else if (device) {
				used(ordinal).addAndGet(-block.memory.capacity());
			}
			released(ordinal);
		}
	}

	private void copyAsync(String call, Object target, Object source, long bytes, Object stream) {
		count(call);
		this.pause.accept(call);
		ByteBuffer to = region(call, target, bytes);
		ByteBuffer from = region(call, source, bytes);
		enqueue(call, stream, () -> to.put(0, from, 0, (int) bytes));
	}

	private AtomicLong used(int device) {
		return this.used.computeIfAbsent(device, (ordinal) -> new AtomicLong());
	}

	private FakeStream legacy(int device) {
		return this.legacy.computeIfAbsent(device, (ordinal) -> new FakeStream(ordinal, true));
	}

	/** The stream a handle names, which must be of {@code device}, the current context's. */
	private FakeStream stream(String call, int device, Object handle) {
		FakeStream stream = (handle != null) ? (FakeStream) handle : legacy(device);
		if (stream.device != device) {
			fail(call, INVALID_HANDLE);
		}
		return stream;
	}

	/** Enqueues work after what the stream already holds, and after what it synchronizes with. */
	private void enqueue(String call, Object handle, Runnable work) {
		FakeStream stream = stream(call, currentDevice(call), handle);
		synchronized (this.engine) {
			FakeStream legacy = legacy(stream.device);
			List<Prerequisite> before = new ArrayList<>();
			if (stream == legacy) {
				this.blocking.stream()
					.filter((other) -> other.device == stream.device)
					.forEach((other) -> before.add(new Prerequisite(other, other.enqueued)));
			}
			else if (stream.blocking) {
				before.add(new Prerequisite(legacy, legacy.enqueued));
			}
			stream.pending.add(new Work(work, before));
			stream.enqueued++;
		}
	}

	private void runAll(FakeStream stream) {
		runUntil(stream, stream.enqueued);
	}

	/** Runs the stream's work up to {@code sequence}, each item after its prerequisites; holds the engine. */
	private void runUntil(FakeStream stream, long sequence) {
		while (stream.completed < sequence && !stream.pending.isEmpty()) {
			Work next = stream.pending.peek();
			for (Prerequisite prerequisite : next.before) {
				runUntil(prerequisite.stream, prerequisite.sequence);
			}
			stream.pending.poll();
			try {
				next.body.run();
			}
			catch (IndexOutOfBoundsException outOfBounds) {
				this.poisoned.add(stream.device);
				fail(this.calling.get(), ILLEGAL_ADDRESS);
			}
			stream.completed++;
		}
	}

	/**
	 * The memory a pointer addresses, checked to be live, large enough, and reachable from the current
	 * context: pinned, of its device, or of a peer it enabled access to.
	 */
	private ByteBuffer region(String call, Object pointer, long bytes) {
		int device = currentDevice(call);
		int owner = ((FakePointer) pointer).block.ordinal;
		if (owner >= 0 && owner != device && !this.peerAccess.contains(List.of(device, owner))) {
			fail(call, INVALID_VALUE);
		}
		return memory(call, pointer, bytes);
	}

	/**
	 * The memory a pointer addresses, checked to be live and large enough, and in a reserved range mapped with
	 * access set.
	 */
	private ByteBuffer memory(String call, Object pointer, long bytes) {
		FakePointer at = (FakePointer) pointer;
		if (!this.live.contains(at.block) || bytes < 0 || at.offset + bytes > at.memory().capacity()
				|| (at.block.range != null && !at.block.range.accessible(at.offset, bytes))) {
			fail(call, INVALID_VALUE);
		}
		return at.memory().slice(at.offset, (int) bytes).order(ByteOrder.nativeOrder());
	}

	/** Counts the call and answers the current context's device, failing when no context of this driver is current. */
	private int requireContext(String call) {
		count(call);
		return currentDevice(call);
	}

	private int currentDevice(String call) {
		Object context = this.current.get();
		if (!(context instanceof FakeContext fake) || this.contexts.get(fake.device()) != fake) {
			fail(call, CudaException.INVALID_CONTEXT);
		}
		int device = ((FakeContext) context).device();
		if (this.poisoned.contains(device)) {
			fail(call, ILLEGAL_ADDRESS);
		}
		return device;
	}

	private void checkDevice(int device, String call) {
		if (device < 0 || device >= this.deviceCount) {
			fail(call, 101);
		}
	}

	private void count(String call) {
		this.calling.set(call);
		this.calls.computeIfAbsent(call, (key) -> new AtomicInteger()).incrementAndGet();
	}

	private static void fail(String call, int code) {
		if (code != 0) {
			String name = switch (code) {
				case INVALID_VALUE -> "CUDA_ERROR_INVALID_VALUE";
				case CudaException.OUT_OF_MEMORY -> "CUDA_ERROR_OUT_OF_MEMORY";
				case CudaException.INSUFFICIENT_DRIVER -> "CUDA_ERROR_INSUFFICIENT_DRIVER";
				case CudaException.NO_DEVICE -> "CUDA_ERROR_NO_DEVICE";
				case 101 -> "CUDA_ERROR_INVALID_DEVICE";
				case CudaException.INVALID_CONTEXT -> "CUDA_ERROR_INVALID_CONTEXT";
				case INVALID_PTX -> "CUDA_ERROR_INVALID_PTX";
				case NOT_FOUND -> "CUDA_ERROR_NOT_FOUND";
				case ILLEGAL_ADDRESS -> "CUDA_ERROR_ILLEGAL_ADDRESS";
				case INVALID_HANDLE -> "CUDA_ERROR_INVALID_HANDLE";
				case PEER_ACCESS_UNSUPPORTED -> "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED";
				case NOT_SUPPORTED -> "CUDA_ERROR_NOT_SUPPORTED";
				case CudaException.PEER_ACCESS_ALREADY_ENABLED -> "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED";
				default -> "CUDA_ERROR_" + code;
			};
			throw new CudaException(call, code, name);
		}
	}

	private static final Pattern ENTRY = Pattern.compile("\\.entry\\s+(\\w+)\\s*\\(([^)]*)\\)");

	private static final Pattern PARAMETER = Pattern.compile("\\.param\\s+\\.(\\w+)");

	/** A kernel's body in Java: the arithmetic of a PTX entry point, over the launch's arguments. */
	@FunctionalInterface
	public interface FakeKernel {

		void run(FakeLaunch launch);

	}

	/** One launch as its Java body sees it: the grid and the arguments. */
	public static final class FakeLaunch {

		private final int blocks;

		private final int threads;

		private final Object[] arguments;

		FakeLaunch(int blocks, int threads, Object[] arguments) {
			this.blocks = blocks;
			this.threads = threads;
			this.arguments = arguments;
		}

		public int blocks() {
			return this.blocks;
		}

		public int threadsPerBlock() {
			return this.threads;
		}

		/**
		 * The device memory of a pointer argument, from the pointer to the end of its allocation, in native order;
		 * in a reserved range, to the end of the mapped and accessible bytes there, none if the pointer's are not.
		 */
		public ByteBuffer memory(int argument) {
			FakePointer pointer = (FakePointer) this.arguments[argument];
			ByteBuffer memory = pointer.memory();
			long end = (pointer.block.range != null) ? pointer.block.range.accessibleEnd(pointer.offset)
					: memory.capacity();
			return memory.slice(pointer.offset, (int) (end - pointer.offset)).order(ByteOrder.nativeOrder());
		}

		public int intArgument(int argument) {
			return (Integer) this.arguments[argument];
		}

		public float floatArgument(int argument) {
			return (Float) this.arguments[argument];
		}

	}

	/**
	 * One allocation's memory and the device it is on (-1: pinned host memory), and the stream-ordered pool
	 * it is from, if any; equal only to itself, as an allocation is.
	 */
	static final class Block {

		final ByteBuffer memory;

		final int ordinal;

		final FakeMemoryPool pool;

		/** The reserved address range this block is, or null for an allocation. */
		final FakeAddressRange range;

		/** The stream whose {@code cuMemFreeAsync} of this block has not run yet; null once it has. */
		FakeStream pendingOn;

		Block(ByteBuffer memory, int ordinal, FakeMemoryPool pool) {
			this(memory, ordinal, pool, null);
		}

		Block(ByteBuffer memory, int ordinal, FakeMemoryPool pool, FakeAddressRange range) {
			this.memory = memory;
			this.ordinal = ordinal;
			this.pool = pool;
			this.range = range;
		}

	}

	/** A stream-ordered pool: the device memory it reserved, and its free blocks, oldest free first. */
	static final class FakeMemoryPool {

		final int device;

		final List<Block> free = new ArrayList<>();

		long reserved;

		FakeMemoryPool(int device) {
			this.device = device;
		}

		/**
		 * The smallest free block of at least {@code bytes} and less than twice that (the fake splits no
		 * block) that an allocation on {@code stream} may take: one whose free has run, or one freed on
		 * that stream; null when there is none. Holds the engine.
		 */
		Block reuse(long bytes, FakeStream stream) {
			Block best = null;
			for (Block block : this.free) {
				long size = block.memory.capacity();
				if (size >= bytes && size < 2 * bytes && (block.pendingOn == null || block.pendingOn == stream)
						&& (best == null || size < best.memory.capacity())) {
					best = block;
				}
			}
			if (best != null) {
				this.free.remove(best);
			}
			return best;
		}

		long freeBytes() {
			return this.free.stream().mapToLong((block) -> block.memory.capacity()).sum();
		}

	}

	/** A device or host pointer: a block of real memory and an offset into it. */
	record FakePointer(Block block, int offset) {

		ByteBuffer memory() {
			return this.block.memory;
		}

	}

	/** A stream's pending work, in issue order, and how far it has run. */
	static final class FakeStream {

		final int device;

		final boolean blocking;

		final Deque<Work> pending = new ArrayDeque<>();

		long enqueued;

		long completed;

		FakeStream(int device, boolean blocking) {
			this.device = device;
			this.blocking = blocking;
		}

	}

	/** An item of stream work and the work of other streams it must follow. */
	record Work(Runnable body, List<Prerequisite> before) {
	}

	record Prerequisite(FakeStream stream, long sequence) {
	}

	static final class FakeEvent {

		FakeStream stream;

		long sequence;

	}

	/** A device's primary context. */
	record FakeContext(int device) {
	}

	record FakeModule(Map<String, List<String>> entries) {
	}

	record FakeFunction(String name, List<String> parameters, FakeKernel body) {
	}

}
