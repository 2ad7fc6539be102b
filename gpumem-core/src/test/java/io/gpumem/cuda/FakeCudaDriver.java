package io.gpumem.cuda;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.gpumem.memory.ByteBufferAccess;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.MemoryInfo;

/**
 * A CUDA driver in Java for tests: real memory in direct buffers, a capacity that refuses allocations
 * as a card does, contexts current per thread (every memory call without one fails with
 * {@code CUDA_ERROR_INVALID_CONTEXT}), and streams whose work runs only when it is waited for, so that
 * tests can see work that has not completed.
 */
public final class FakeCudaDriver implements CudaDriver {

	static final int INVALID_VALUE = 1;

	final long capacity;

	volatile int driverVersion = 12080;

	volatile int deviceCount = 1;

	volatile int initResult;

	volatile int retainResult;

	volatile boolean concurrentManagedAccess = true;

	private final AtomicInteger refusals = new AtomicInteger();

	private final AtomicLong used = new AtomicLong();

	private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

	private final Set<Block> live = ConcurrentHashMap.newKeySet();

	private final AtomicInteger retained = new AtomicInteger();

	private final Object context = new Object() {

		@Override
		public String toString() {
			return "FakeContext";
		}

	};

	private final ThreadLocal<Object> current = new ThreadLocal<>();

	public FakeCudaDriver(long capacity) {
		this.capacity = capacity;
	}

	/** Makes the next {@code count} allocations fail with {@code CUDA_ERROR_OUT_OF_MEMORY}. */
	void refuseNextAllocations(int count) {
		this.refusals.set(count);
	}

	/** How many times a driver call was made. */
	int calls(String call) {
		AtomicInteger count = this.calls.get(call);
		return (count != null) ? count.get() : 0;
	}

	int retainedContexts() {
		return this.retained.get();
	}

	long usedBytes() {
		return this.used.get();
	}

	int liveAllocations() {
		return this.live.size();
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
	public int computeCapability(int device) {
		checkDevice(device, "cuDeviceGetAttribute");
		return 90;
	}

	@Override
	public boolean concurrentManagedAccess(int device) {
		return this.concurrentManagedAccess;
	}

	@Override
	public Object retainPrimaryContext(int device) {
		count("cuDevicePrimaryCtxRetain");
		checkDevice(device, "cuDevicePrimaryCtxRetain");
		fail("cuDevicePrimaryCtxRetain", this.retainResult);
		this.retained.incrementAndGet();
		return this.context;
	}

	@Override
	public void releasePrimaryContext(int device) {
		checkDevice(device, "cuDevicePrimaryCtxRelease");
		this.retained.decrementAndGet();
	}

	@Override
	public void setCurrentContext(Object context) {
		count("cuCtxSetCurrent");
		this.current.set(context);
	}

	@Override
	public MemoryInfo memoryInfo() {
		requireContext("cuMemGetInfo");
		return new MemoryInfo(this.capacity - this.used.get(), this.capacity);
	}

	@Override
	public Object allocateDevice(long bytes) {
		return allocate("cuMemAlloc", bytes, true);
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
		return new FakePointer(base.block, base.offset + (int) bytes, base.device);
	}

	@Override
	public void copyArrayToDevice(Object device, Object array, long arrayByteOffset, long bytes) {
		ElementType type = ElementType.of(array.getClass().getComponentType());
		ByteBufferAccess.copyIn(region("cuMemcpyHtoD", device, bytes), 0, array,
				(int) (arrayByteOffset / type.bytes()), (int) (bytes / type.bytes()), type);
	}

	@Override
	public void copyDeviceToArray(Object array, long arrayByteOffset, Object device, long bytes) {
		ElementType type = ElementType.of(array.getClass().getComponentType());
		ByteBufferAccess.copyOut(region("cuMemcpyDtoH", device, bytes), 0, array,
				(int) (arrayByteOffset / type.bytes()), (int) (bytes / type.bytes()), type);
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
	public void memsetD8(Object device, byte value, long count, Object stream) {
		ByteBuffer target = region("cuMemsetD8", device, count);
		enqueue(stream, () -> ByteBufferAccess.fill(target, 0, count, value));
	}

	@Override
	public void memsetD32(Object device, int value, long count, Object stream) {
		ByteBuffer target = region("cuMemsetD32", device, count * 4);
		enqueue(stream, () -> ByteBufferAccess.fillInts(target, 0, count, value));
	}

	@Override
	public void prefetch(Object pointer, long bytes, int device, Object stream) {
		region("cuMemPrefetchAsync", pointer, bytes);
		enqueue(stream, () -> {
		});
	}

	@Override
	public Object createStream() {
		requireContext("cuStreamCreate");
		return new FakeStream();
	}

	@Override
	public void synchronizeStream(Object stream) {
		requireContext("cuStreamSynchronize");
		if (stream != null) {
			((FakeStream) stream).runUntil(Long.MAX_VALUE);
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
		requireContext("cuEventRecord");
		FakeEvent recorded = (FakeEvent) event;
		recorded.stream = (FakeStream) stream;
		recorded.sequence = (stream != null) ? ((FakeStream) stream).enqueued : 0;
	}

	@Override
	public boolean queryEvent(Object event) {
		requireContext("cuEventQuery");
		FakeEvent recorded = (FakeEvent) event;
		return recorded.stream == null || recorded.stream.completed >= recorded.sequence;
	}

	@Override
	public void synchronizeEvent(Object event) {
		requireContext("cuEventSynchronize");
		FakeEvent recorded = (FakeEvent) event;
		if (recorded.stream != null) {
			recorded.stream.runUntil(recorded.sequence);
		}
	}

	@Override
	public void destroyEvent(Object event) {
		requireContext("cuEventDestroy");
	}

	private Object allocate(String call, long bytes, boolean device) {
		requireContext(call);
		if (this.refusals.getAndUpdate((n) -> Math.max(0, n - 1)) > 0) {
			fail(call, CudaException.OUT_OF_MEMORY);
		}
		if (device) {
			long now;
			do {
				now = this.used.get();
				if (bytes > this.capacity - now) {
					fail(call, CudaException.OUT_OF_MEMORY);
				}
			}
			while (!this.used.compareAndSet(now, now + bytes));
		}
		Block block = new Block(ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder()));
		this.live.add(block);
		return new FakePointer(block, 0, device);
	}

	private void free(String call, Object pointer, boolean device) {
		requireContext(call);
		FakePointer block = (FakePointer) pointer;
		if (block.offset != 0 || block.device != device || !this.live.remove(block.block)) {
			fail(call, INVALID_VALUE);
		}
		if (device) {
			this.used.addAndGet(-block.memory().capacity());
		}
	}

	private void copyAsync(String call, Object target, Object source, long bytes, Object stream) {
		ByteBuffer to = region(call, target, bytes);
		ByteBuffer from = region(call, source, bytes);
		enqueue(stream, () -> to.put(0, from, 0, (int) bytes));
	}

	private void enqueue(Object stream, Runnable work) {
		if (stream == null) {
			work.run();
		}
		else {
			((FakeStream) stream).enqueue(work);
		}
	}

	/** The memory a pointer addresses, checked to be live and large enough. */
	private ByteBuffer region(String call, Object pointer, long bytes) {
		requireContext(call);
		FakePointer at = (FakePointer) pointer;
		if (!this.live.contains(at.block) || bytes < 0 || at.offset + bytes > at.memory().capacity()) {
			fail(call, INVALID_VALUE);
		}
		return at.memory().slice(at.offset, (int) bytes).order(ByteOrder.nativeOrder());
	}

	private void requireContext(String call) {
		count(call);
		if (this.current.get() != this.context) {
			fail(call, CudaException.INVALID_CONTEXT);
		}
	}

	private void checkDevice(int device, String call) {
		if (device < 0 || device >= this.deviceCount) {
			fail(call, 101);
		}
	}

	private void count(String call) {
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
				case 700 -> "CUDA_ERROR_ILLEGAL_ADDRESS";
				default -> "CUDA_ERROR_" + code;
			};
			throw new CudaException(call, code, name);
		}
	}

	/** One allocation's memory; equal only to itself, as an allocation is. */
	static final class Block {

		final ByteBuffer memory;

		Block(ByteBuffer memory) {
			this.memory = memory;
		}

	}

	/** A device or host pointer: a block of real memory and an offset into it. */
	record FakePointer(Block block, int offset, boolean device) {

		ByteBuffer memory() {
			return this.block.memory;
		}

	}

	/** Work enqueued on a stream, run in order when someone waits for it. */
	static final class FakeStream {

		private final Deque<Runnable> pending = new ArrayDeque<>();

		volatile long enqueued;

		volatile long completed;

		synchronized void enqueue(Runnable work) {
			this.pending.add(work);
			this.enqueued++;
		}

		synchronized void runUntil(long sequence) {
			while (this.completed < sequence && !this.pending.isEmpty()) {
				this.pending.poll().run();
				this.completed++;
			}
		}

	}

	static final class FakeEvent {

		FakeStream stream;

		long sequence;

	}

}
