package io.gpumem.cuda;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.gpumem.backend.VirtualMemory;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.SizeClassLadder;
import io.gpumem.pool.SleepMode;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.pool.arena.Arena;
import io.gpumem.stream.GpuEvent;
import io.gpumem.stream.GpuStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * What the CUDA backend must do, run against the fake driver everywhere and against the real driver
 * where the probe finds a device.
 */
abstract class CudaScenarios {

	private static final SizeClassLadder LADDER = SizeClassLadder.geometric(256, 4L << 20, 2, 256);

	private final SplittableRandom random = new SplittableRandom(42);

	protected CudaBackend backend;

	protected StratifiedMemoryPool device;

	protected StratifiedMemoryPool pinned;

	protected StratifiedMemoryPool unified;

	/** Opens the backend under test. */
	protected abstract CudaBackend openBackend();

	/** The type {@code unwrap} gives kernels for device memory. */
	protected abstract Class<?> devicePointerType();

	@BeforeEach
	void openPools() {
		this.backend = openBackend();
		this.device = pool(MemoryKind.DEVICE);
		this.pinned = pool(MemoryKind.PINNED);
		this.unified = pool(MemoryKind.UNIFIED);
	}

	@AfterEach
	void closePools() {
		if (this.backend != null) {
			this.device.close();
			this.pinned.close();
			this.unified.close();
			this.backend.close();
		}
	}

	/**
	 * Where the probe of one granule passes, a pool over the device's virtual memory maps granules as it lends,
	 * takes a copy and a fill across a granule boundary, unmaps a free granule while its neighbour keeps its bytes,
	 * and trims to nothing; only a device that reports no virtual-memory management keeps fixed segments.
	 */
	@Test
	void expandableSegmentsMapAsTheyLendAndTrimToNothing() {
		VirtualMemory virtualMemory = virtualMemoryOrWhyNot();
		if (virtualMemory == null) {
			return;
		}
		long granule = virtualMemory.allocator().addressSpace().granularity();
		long step = Arena.mappingStep(PoolConfig.DEFAULT_MAPPING_STEP_BYTES, granule);
		long freeBefore = this.backend.memoryInfo().freeBytes();
		StratifiedMemoryPool pool = new StratifiedMemoryPool(virtualMemory.allocator(),
				PoolConfig.builder("expandable").build());
		PooledBuffer across = pool.acquire(step + step / 2);
		PooledBuffer after = pool.acquire(granule / 2 + granule / 8);
		assertThat(pool.reservedBytes()).as("two steps, the second one shared").isEqualTo(2 * step);
		assertThat(this.backend.memoryInfo().freeBytes()).isLessThanOrEqualTo(freeBefore - 2 * step);
		float[] data = new float[(int) (after.size() / Float.BYTES)];
		for (int i = 0; i < data.length; i++) {
			data[i] = this.random.nextFloat();
		}
		after.copyFrom(0, data, 0, data.length);
		across.fill((byte) 7);
		across.close();
		pool.trim(0);
		assertThat(pool.reservedBytes()).as("the first step, wholly free, unmapped").isEqualTo(step);
		float[] back = new float[data.length];
		after.copyTo(0, back, 0, back.length);
		assertThat(back).as("the step still mapped keeps its bytes").isEqualTo(data);
		after.close();
		pool.trim(0);
		assertThat(pool.reservedBytes()).isZero();
		pool.close();
		assertThat(this.backend.memoryInfo().freeBytes()).isGreaterThan(freeBefore - granule);
	}

	/**
	 * Where the device maps memory into reserved ranges, 100 buffers of 1 KiB to 1 MiB written with patterns of their
	 * own, offloaded by a sleep: the device holds at most a granule more than before the pool; woken, every buffer
	 * has its old device pointer and every byte of its pattern.
	 */
	@Test
	void aPoolAsleepGivesTheDeviceItsMemoryAndWakesWithEveryPointerAndByte() {
		VirtualMemory virtualMemory = virtualMemoryOrWhyNot();
		if (virtualMemory == null) {
			return;
		}
		long granule = virtualMemory.allocator().addressSpace().granularity();
		long freeBefore = this.backend.memoryInfo().freeBytes();
		StratifiedMemoryPool pool = new StratifiedMemoryPool(virtualMemory.allocator(),
				PoolConfig.builder("sleepy").build());
		List<PooledBuffer> buffers = new ArrayList<>();
		List<byte[]> patterns = new ArrayList<>();
		List<String> pointers = new ArrayList<>();
		for (int i = 0; i < 100; i++) {
			byte[] pattern = new byte[(1024 << this.random.nextInt(11)) - this.random.nextInt(256)];
			this.random.nextBytes(pattern);
			PooledBuffer buffer = pool.acquire(pattern.length);
			buffer.copyFrom(pattern);
			buffers.add(buffer);
			patterns.add(pattern);
			pointers.add(String.valueOf(buffer.unwrap(devicePointerType())));
		}

		pool.sleep(SleepMode.OFFLOAD);
		assertThat(this.backend.memoryInfo().freeBytes()).isGreaterThanOrEqualTo(freeBefore - granule);
		pool.wake();

		for (int i = 0; i < buffers.size(); i++) {
			assertThat(String.valueOf(buffers.get(i).unwrap(devicePointerType()))).isEqualTo(pointers.get(i));
			byte[] back = new byte[patterns.get(i).length];
			buffers.get(i).copyTo(back);
			assertThat(back).as("buffer %d", i).isEqualTo(patterns.get(i));
			buffers.get(i).close();
		}
		pool.close();
		assertThat(this.backend.memoryInfo().freeBytes()).isGreaterThan(freeBefore - granule);
	}

	/**
	 * A block of device memory copies into pinned memory and back in one driver call each, and into another device
	 * block through host arrays of a megabyte: every byte arrives, across the megabytes.
	 */
	@Test
	void aDeviceBlockCopiesIntoPinnedMemoryAndBackAndIntoAnotherBlock() {
		int bytes = (3 << 20) + 100;
		byte[] pattern = new byte[bytes];
		this.random.nextBytes(pattern);
		MemoryAllocator device = this.backend.allocator(MemoryKind.DEVICE);
		MemoryAllocator pinned = this.backend.allocator(MemoryKind.PINNED);
		Allocation source = device.allocate(bytes);
		Allocation host = pinned.allocate(bytes + 64);
		Allocation back = device.allocate(bytes);
		Allocation other = device.allocate(bytes);
		try {
			source.copyFromHost(0, pattern, 0, bytes, ElementType.BYTE);
			source.copyTo(0, host, 64, bytes);
			host.copyTo(64, back, 0, bytes);
			back.copyTo(0, other, 0, bytes);
			byte[] read = new byte[bytes];
			other.copyToHost(0, read, 0, bytes, ElementType.BYTE);
			assertThat(Arrays.mismatch(read, pattern)).as("the first byte that differs").isEqualTo(-1);
		}
		finally {
			device.free(source);
			pinned.free(host);
			device.free(back);
			device.free(other);
		}
	}

	/** A sleep waits for the work enqueued on a lent buffer before it copies and unmaps the buffer's memory. */
	@Test
	void aSleepWaitsForTheStreamWorkOnALentBufferBeforeItUnmapsItsMemory() {
		VirtualMemory virtualMemory = virtualMemoryOrWhyNot();
		if (virtualMemory == null) {
			return;
		}
		StratifiedMemoryPool pool = new StratifiedMemoryPool(virtualMemory.allocator(),
				PoolConfig.builder("sleepy").build());
		try (GpuStream stream = this.backend.createStream(); PooledBuffer buffer = pool.acquire(3L << 20)) {
			buffer.fill((byte) 1);
			stream.fill(buffer, 0, buffer.size(), (byte) 7);
			pool.sleep(SleepMode.OFFLOAD);
			pool.wake();
			byte[] back = new byte[(int) buffer.size()];
			buffer.copyTo(back);
			byte[] filled = new byte[back.length];
			Arrays.fill(filled, (byte) 7);
			assertThat(back).as("the stream's fill, run before the offload").isEqualTo(filled);
		}
		pool.close();
	}

	/**
	 * The device's virtual memory; null where it has none, after checking that only a device that reports no
	 * virtual-memory management keeps fixed segments.
	 */
	private VirtualMemory virtualMemoryOrWhyNot() {
		VirtualMemory virtualMemory = this.backend.virtualMemory();
		if (!virtualMemory.supported()) {
			assertThat(virtualMemory.reason()).as("only a device without virtual memory management keeps segments")
				.contains("CUDA device " + this.backend.deviceId() + " does not report virtual memory");
			return null;
		}
		return virtualMemory;
	}

	@Test
	void anEventClosedByOneThreadIsCompleteToAnotherAskingMeanwhile() throws Exception {
		ExecutorService asker = Executors.newSingleThreadExecutor();
		try (GpuStream stream = this.backend.createStream(); PooledBuffer buffer = this.device.acquire(1 << 20)) {
			for (int i = 0; i < 200; i++) {
				stream.fill(buffer, 0, buffer.size(), (byte) i);
				GpuEvent event = stream.record();
				CompletableFuture<Void> asking = CompletableFuture.runAsync(() -> {
					while (!event.isComplete()) {
						Thread.onSpinWait();
					}
				}, asker);
				event.close();
				asking.get(10, TimeUnit.SECONDS);
			}
		}
		finally {
			asker.shutdownNow();
		}
	}

	@Test
	void aKernelWritingOutOfBoundsFailsTheDeviceForGoodAndEveryPartRefusesWork() throws Exception {
		runDeviceFault();
	}

	/**
	 * Runs the {@link DeviceFaultScenario} over this backend; a driver whose device it leaves unusable for the
	 * rest of the process runs it in a JVM of its own.
	 */
	protected void runDeviceFault() throws Exception {
		DeviceFaultScenario.run(this.backend, this.device, this.pinned);
	}

	/**
	 * A buffer closed after its pool and the backend, as a request ending during shutdown closes it, gives its memory
	 * back: the context stays retained until the last is freed ({@link #afterLateCloses()} checks the driver).
	 */
	@Test
	void buffersClosedAfterTheirPoolsAndTheBackendGiveTheirMemoryBack() {
		List<PooledBuffer> late = new ArrayList<>(List.of(this.device.acquire(1 << 20), this.pinned.acquire(4096),
				this.unified.acquire(4096)));
		VirtualMemory virtualMemory = this.backend.virtualMemory();
		StratifiedMemoryPool expandable = virtualMemory.supported()
				? new StratifiedMemoryPool(virtualMemory.allocator(), PoolConfig.builder("expandable").build()) : null;
		if (expandable != null) {
			late.add(expandable.acquire(1 << 20));
			expandable.close();
		}
		this.device.close();
		this.pinned.close();
		this.unified.close();
		this.backend.close();
		assertThatCode(() -> late.forEach(PooledBuffer::close)).doesNotThrowAnyException();
		assertThat(late).allMatch(PooledBuffer::isClosed);
		afterLateCloses();
	}

	/** What a driver that can be asked shows once every buffer closed after the backend was: nothing held. */
	protected void afterLateCloses() {
	}

	private StratifiedMemoryPool pool(MemoryKind kind) {
		return new StratifiedMemoryPool(this.backend.allocator(kind),
				PoolConfig.builder(kind.name().toLowerCase()).sizeClasses(LADDER).build());
	}

	@Test
	void roundTripsEveryElementTypeThroughDeviceMemory() {
		int n = 10_000;
		byte[] bytes = new byte[n];
		this.random.nextBytes(bytes);
		int[] ints = this.random.ints(n).toArray();
		long[] longs = this.random.longs(n).toArray();
		float[] floats = new float[n];
		double[] doubles = this.random.doubles(n).toArray();
		for (int i = 0; i < n; i++) {
			floats[i] = (float) doubles[i];
		}
		try (PooledBuffer buffer = this.device.acquire(8L * n + 64)) {
			buffer.copyFrom(bytes);
			byte[] bytesBack = new byte[n];
			buffer.copyTo(bytesBack);
			assertThat(bytesBack).isEqualTo(bytes);

			buffer.copyFrom(12, ints, 0, n);
			int[] intsBack = new int[n];
			buffer.copyTo(12, intsBack, 0, n);
			assertThat(intsBack).isEqualTo(ints);

			buffer.copyFrom(64, longs, 0, n);
			long[] longsBack = new long[n + 2];
			buffer.copyTo(64, longsBack, 1, n);
			assertThat(Arrays.copyOfRange(longsBack, 1, n + 1)).isEqualTo(longs);

			buffer.copyFrom(floats);
			float[] floatsBack = new float[n];
			buffer.copyTo(floatsBack);
			assertThat(floatsBack).isEqualTo(floats);

			buffer.copyFrom(8, doubles, 0, n);
			double[] doublesBack = new double[n];
			buffer.copyTo(8, doublesBack, 0, n);
			assertThat(doublesBack).isEqualTo(doubles);
		}
	}

	@Test
	void fillsBytesAndThirtyTwoBitWords() {
		try (PooledBuffer buffer = this.device.acquire(4096)) {
			buffer.fill((byte) 0x5A);
			buffer.fillInts(1024, 256, Float.floatToRawIntBits(Float.POSITIVE_INFINITY));
			byte[] head = new byte[1024];
			buffer.copyTo(head);
			assertThat(head).containsOnly((byte) 0x5A);
			float[] words = new float[256];
			buffer.copyTo(1024, words, 0, 256);
			assertThat(words).containsOnly(Float.POSITIVE_INFINITY);
			int[] tail = new int[1];
			buffer.copyTo(2048, tail, 0, 1);
			assertThat(tail[0]).isEqualTo(0x5A5A5A5A);
		}
	}

	@Test
	void theStreamOrderedPoolLendsOnTheRequestsStreamAndGivesBackOnTrim() {
		CudaAsyncAllocator ordered = (CudaAsyncAllocator) this.backend.streamOrderedAllocator();
		int[] values = this.random.ints(100_000).toArray();
		try (StratifiedMemoryPool pool = new StratifiedMemoryPool(ordered,
				PoolConfig.builder("async").sizeClasses(LADDER).build());
				GpuStream stream = this.backend.createStream();
				PooledBuffer staging = this.pinned.acquire(4L * values.length)) {
			try (PooledBuffer onStream = pool.acquire(4L * values.length, stream);
					PooledBuffer anywhere = pool.acquire(4L * values.length)) {
				anywhere.copyFrom(values);
				stream.copy(anywhere, onStream);
				stream.copy(onStream, staging);
				stream.synchronize();
				int[] back = new int[values.length];
				staging.copyTo(back);
				assertThat(back).isEqualTo(values);
			}
			assertThat(ordered.streamOrderedAllocations()).isEqualTo(1);
			assertThat(ordered.allocatedBytes()).isEqualTo(pool.reservedBytes()).isPositive();
			assertThat(pool.trim(0)).isEqualTo(2 * pool.blockSize(4L * values.length));
			assertThat(ordered.allocatedBytes()).isZero();
		}
	}

	@Test
	void unwrapsTheDevicePointerForKernels() {
		try (PooledBuffer buffer = this.device.acquire(1000)) {
			assertThat(buffer.unwrap(devicePointerType())).isNotNull();
			assertThatIllegalArgumentException().isThrownBy(() -> buffer.unwrap(ByteBuffer.class))
				.withMessageContaining("CUdeviceptr");
		}
	}

	@Test
	void aThreadThatNeverTouchedTheContextCopiesAndFrees() throws Exception {
		int[] values = this.random.ints(5000).toArray();
		ExecutorService fresh = Executors.newSingleThreadExecutor();
		try {
			int[] back = CompletableFuture.supplyAsync(() -> {
				try (PooledBuffer buffer = this.device.acquire(4L * values.length)) {
					buffer.copyFrom(values);
					int[] read = new int[values.length];
					buffer.copyTo(read);
					return read;
				}
			}, fresh).get(30, TimeUnit.SECONDS);
			assertThat(back).isEqualTo(values);
		}
		finally {
			fresh.shutdown();
		}
	}

	@Test
	void copiesAsynchronouslyThroughPinnedStaging() {
		double[] values = this.random.doubles(100_000).toArray();
		long bytes = 8L * values.length;
		try (GpuStream stream = this.backend.createStream();
				PooledBuffer stagingIn = this.pinned.acquire(bytes);
				PooledBuffer onDevice = this.device.acquire(bytes);
				PooledBuffer stagingOut = this.pinned.acquire(bytes)) {
			stagingIn.copyFrom(values);
			stagingOut.fill((byte) 0);
			stream.copy(stagingIn, 0, onDevice, 0, bytes);
			stream.copy(onDevice, 0, stagingOut, 0, bytes);
			try (GpuEvent done = stream.record()) {
				whileInFlight(done, stagingOut);
				done.await();
				assertThat(done.isComplete()).isTrue();
			}
			double[] back = new double[values.length];
			stagingOut.copyTo(back);
			assertThat(back).isEqualTo(values);
		}
	}

	/** What a test may check while the work before {@code event} may not have run yet. */
	protected void whileInFlight(GpuEvent event, PooledBuffer target) {
	}

	@Test
	void pinnedMemoryUsedAfterFreeThrowsAndNeverTouchesIt() {
		PooledBuffer buffer = this.pinned.acquire(1024);
		ByteBuffer view = buffer.unwrap(ByteBuffer.class);
		view.putLong(0, 0x1234_5678_9ABC_DEF0L);
		long[] word = new long[1];
		buffer.copyTo(word);
		assertThat(word[0]).isEqualTo(0x1234_5678_9ABC_DEF0L);
		buffer.close();
		this.pinned.trim(0);
		assertThatIllegalStateException().isThrownBy(() -> buffer.copyTo(word));
		assertThatIllegalStateException().isThrownBy(() -> buffer.unwrap(ByteBuffer.class));
		assertThat(view.getLong(0)).as("an escaped view stays mapped until it is unreachable")
			.isEqualTo(0x1234_5678_9ABC_DEF0L);
	}

	@Test
	void unifiedMemoryIsPrefetchedBothWaysAndReadBack() {
		float[] values = new float[4096];
		Arrays.fill(values, 2.5f);
		try (GpuStream stream = this.backend.createStream(); PooledBuffer buffer = this.unified.acquire(16384)) {
			buffer.copyFrom(values);
			stream.prefetchToDevice(buffer);
			stream.fill(buffer, 0, 4, (byte) 0);
			stream.prefetchToHost(buffer);
			stream.synchronize();
			float[] back = new float[values.length];
			buffer.copyTo(back);
			assertThat(back[0]).isZero();
			assertThat(Arrays.copyOfRange(back, 1, back.length)).containsOnly(2.5f);
			try (PooledBuffer notUnified = this.device.acquire(256)) {
				assertThatIllegalArgumentException().isThrownBy(() -> stream.prefetchToDevice(notUnified))
					.withMessageContaining("UNIFIED");
			}
		}
	}

	@Test
	void anAllocationLargerThanTheDeviceIsOurOutOfMemoryExceptionWithTheDevicesFigures() {
		long total = this.backend.memoryInfo().totalBytes();
		long reservedBefore = this.device.reservedBytes();
		assertThatExceptionOfType(GpuOutOfMemoryException.class)
			.isThrownBy(() -> this.device.acquire(total + (1L << 30)))
			.satisfies((ex) -> {
				assertThat(ex.diagnostic().capacityBytes()).isEqualTo(total);
				assertThat(ex.diagnostic().requestedBytes()).isEqualTo(total + (1L << 30));
				assertThat(ex.getMessage()).contains("larger than the device's capacity, refused at once");
			});
		assertThat(this.device.reservedBytes()).isEqualTo(reservedBefore);
		assertThat(this.device.statistics().allocationFailures()).isEqualTo(1);
	}

	@Test
	void manySmallBuffersComeFromFewSlabsAndAllGoBackWhenThePoolCloses() {
		long freeBefore = this.backend.memoryInfo().freeBytes();
		int added = this.device.warm(256, 1000);
		assertThat(added).isEqualTo(1000);
		PooledBuffer[] held = new PooledBuffer[1000];
		for (int i = 0; i < held.length; i++) {
			held[i] = this.device.acquire(200);
			held[i].copyFrom(new int[] { i });
		}
		for (int i = 0; i < held.length; i++) {
			int[] back = new int[1];
			held[i].copyTo(back);
			assertThat(back[0]).as("buffer %d keeps its own bytes", i).isEqualTo(i);
			held[i].close();
		}
		assertThat(this.device.statistics().hits()).isEqualTo(1000);
		this.device.trim(0);
		assertThat(this.device.reservedBytes()).isZero();
		assertThat(this.backend.memoryInfo().freeBytes()).isGreaterThanOrEqualTo(freeBefore - (2L << 20));
	}

}
