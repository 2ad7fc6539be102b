package io.gpumem.reduction;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import io.gpumem.backend.GpuBackend;
import io.gpumem.buffer.GpuBuffer;
import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PoolStatistics;
import io.gpumem.pool.SizeClassStatistics;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.stream.GpuEvent;
import io.gpumem.stream.GpuStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.offset;

class ReductionBufferCacheTest {

	private GpuBackend backend;

	private StratifiedMemoryPool device;

	private StratifiedMemoryPool pinned;

	private ReductionBufferCache cache;

	static Stream<Named<Supplier<GpuBackend>>> backends() {
		return Stream.of(Named.of("host", () -> new HostBackend(64L << 20)),
				Named.of("cuda on the fake driver", () -> CudaBackend.open(new FakeCudaDriver(64L << 20), 0)));
	}

	private void open(Supplier<GpuBackend> backend) {
		open(backend, PoolConfig.builder("device"));
	}

	private void open(Supplier<GpuBackend> backend, PoolConfig.Builder device) {
		this.backend = backend.get();
		this.device = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE), device.build());
		this.pinned = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.PINNED),
				PoolConfig.builder("pinned").build());
		this.cache = new ReductionBufferCache("reduction", this.device, this.pinned, 4);
	}

	@AfterEach
	void close() {
		this.cache.close();
		this.device.close();
		this.pinned.close();
		assertThat(this.backend.memoryInfo().usedBytes()).as("everything given back").isZero();
		this.backend.close();
	}

	@ParameterizedTest
	@MethodSource("backends")
	void theSecondAcquireOfAKeyIsAHit(Supplier<GpuBackend> backend) {
		open(backend);
		this.cache.acquire(float.class, 4, ReductionOp.SUM).close();
		try (ReductionBuffer buffer = this.cache.acquire(float.class, 4, ReductionOp.SUM)) {
			assertThat(buffer.size()).isEqualTo(16);
		}
		this.cache.acquire(float.class, 4, ReductionOp.MAX).close();
		PoolStatistics stats = this.cache.statistics();
		assertThat(stats.name()).isEqualTo("reduction");
		assertThat(stats.kind()).isEqualTo(MemoryKind.DEVICE);
		assertThat(stats.requests()).isEqualTo(3);
		assertThat(stats.hits()).isEqualTo(1);
		assertThat(stats.misses()).isEqualTo(2);
		assertThat(stats.returns()).isEqualTo(3);
		assertThat(stats.cachedBuffers()).isEqualTo(2);
		assertThat(stats.cachedBytes()).as("the device pool's 256 B blocks behind them")
			.isEqualTo(2 * this.device.blockSize(16))
			.isEqualTo(stats.reservedBytes());
		assertThat(stats.sizeClasses()).singleElement().satisfies((row) -> {
			assertThat(row.sizeBytes()).isEqualTo(16);
			assertThat(row.hits()).isEqualTo(1);
		});
	}

	@ParameterizedTest
	@MethodSource("backends")
	void itsBuffersAreTheDevicePoolsCountedThereAndReleasedByItsTrim(Supplier<GpuBackend> backend) {
		open(backend);
		long small = this.device.blockSize(16);
		long large = this.device.blockSize(8 * 100);
		ReductionBuffer sum = this.cache.acquire(float.class, 4, ReductionOp.SUM);
		ReductionBuffer max = this.cache.acquire(double.class, 100, ReductionOp.MAX);
		PoolStatistics lent = this.device.statistics();
		assertThat(lent.requests()).isEqualTo(2);
		assertThat(lent.inUseBuffers()).isEqualTo(2);
		assertThat(lent.inUseBytes()).isEqualTo(small + large);
		sum.close();
		max.close();
		PoolStatistics kept = this.device.statistics();
		assertThat(kept.inUseBuffers()).as("set aside, not lent").isZero();
		assertThat(kept.cachedBuffers()).isEqualTo(2);
		assertThat(kept.sizeClasses()).filteredOn((row) -> row.cachedBuffers() > 0)
			.extracting(SizeClassStatistics::cachedBytes)
			.containsExactly(small, large);
		assertThat(this.cache.cachedBytes()).isEqualTo(small + large);
		try (ReductionBuffer again = this.cache.acquire(float.class, 4, ReductionOp.SUM)) {
			PoolStatistics taken = this.device.statistics();
			assertThat(taken.hits() - kept.hits()).as("taken again from the shelf").isEqualTo(1);
			assertThat(taken.misses()).isEqualTo(kept.misses());
		}
		assertThat(this.device.trim(0)).as("the pool's trim reaches the shelf").isEqualTo(kept.reservedBytes());
		assertThat(this.device.reservedBytes()).isZero();
		assertThat(this.cache.cachedBytes()).isZero();
		assertThat(this.cache.statistics().cachedBuffers()).isZero();
	}

	@ParameterizedTest
	@MethodSource("backends")
	void theDevicePoolsCapOnCachedBytesHoldsForTheBuffersSetAside(Supplier<GpuBackend> backend) {
		open(backend, PoolConfig.builder("device").maxCachedBytes(0));
		this.cache.acquire(float.class, 4, ReductionOp.SUM).close();
		assertThat(this.cache.statistics().cachedBuffers()).isZero();
		assertThat(this.cache.statistics().trimmedBytes()).isEqualTo(this.device.blockSize(16));
		assertThat(this.device.statistics().cachedBytes()).isZero();
	}

	@ParameterizedTest
	@MethodSource("backends")
	void everyAcquireStartsFromTheIdentityOfItsOp(Supplier<GpuBackend> backend) {
		open(backend);
		for (ElementType type : List.of(ElementType.INT, ElementType.LONG, ElementType.FLOAT, ElementType.DOUBLE)) {
			for (ReductionOp op : ReductionOp.values()) {
				try (ReductionBuffer dirty = this.cache.acquire(type, 3, op)) {
					dirty.fill((byte) 0x7B);
				}
				try (ReductionBuffer buffer = this.cache.acquire(type, 3, op)) {
					for (int slot = 0; slot < 3; slot++) {
						assertThat(buffer.readResult(slot)).as("%s %s slot %d", type, op, slot)
							.isEqualTo(expectedIdentity(type, op));
					}
				}
			}
		}
		assertThat(this.cache.statistics().hits()).isEqualTo(16);
	}

	@ParameterizedTest
	@MethodSource("backends")
	void sumMinAndMaxReadBackRight(Supplier<GpuBackend> backend) {
		open(backend);
		double[] values = new SplittableRandom(7).doubles(500, -1000, 1000).toArray();
		for (ReductionOp op : List.of(ReductionOp.SUM, ReductionOp.MIN, ReductionOp.MAX)) {
			try (ReductionBuffer buffer = this.cache.acquire(double.class, 2, op)) {
				double[] slot = new double[1];
				for (double value : values) {
					buffer.copyTo(8, slot, 0, 1);
					slot[0] = op.combine(slot[0], value);
					buffer.copyFrom(8, slot, 0, 1);
				}
				double expected = switch (op) {
					case SUM -> Arrays.stream(values).sum();
					case MIN -> Arrays.stream(values).min().orElseThrow();
					case MAX -> Arrays.stream(values).max().orElseThrow();
					case PRODUCT -> throw new IllegalStateException();
				};
				assertThat(buffer.readResult(1).doubleValue()).isCloseTo(expected, offset(1e-6));
				assertThat(buffer.readResult(0)).as("the other slot is untouched")
					.isEqualTo(expectedIdentity(ElementType.DOUBLE, op));
			}
		}
		try (ReductionBuffer ints = this.cache.acquire(int.class, 1, ReductionOp.MIN)) {
			int[] slot = new int[1];
			for (int value : new int[] { 5, -3, 12 }) {
				ints.copyTo(slot);
				slot[0] = (int) ReductionOp.MIN.combine(slot[0], value);
				ints.copyFrom(slot);
			}
			assertThat(ints.readResult(0)).isEqualTo(-3);
		}
	}

	@ParameterizedTest
	@MethodSource("backends")
	void atMostTheConfiguredNumberOfBuffersPerKeyStayCached(Supplier<GpuBackend> backend) {
		open(backend);
		List<ReductionBuffer> held = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			held.add(this.cache.acquire(long.class, 8, ReductionOp.SUM));
		}
		held.forEach(ReductionBuffer::close);
		PoolStatistics stats = this.cache.statistics();
		long block = this.device.blockSize(64);
		assertThat(stats.cachedBuffers()).isEqualTo(4);
		assertThat(stats.trimmedBytes()).as("given back to the device pool").isEqualTo(2 * block);
		assertThat(stats.reservedBytes()).isEqualTo(4 * block);
		assertThat(this.cache.trim(block)).isEqualTo(3 * block);
		assertThat(this.cache.cachedBytes()).isEqualTo(block);
		assertThat(this.device.statistics().inUseBuffers()).as("the device pool lends none of the six").isZero();
	}

	/**
	 * A close whose wait for the stream fails (an interrupted wait, a device error) cannot know the kernel is done: the
	 * buffer goes back to the pool after the stream's work, not onto the shelf for the next request's reset.
	 */
	@Test
	void aCloseWhoseStreamWaitFailsShelvesNothing() {
		open(() -> new HostBackend(64L << 20));
		GpuStream stream = this.backend.createStream();
		GpuStream failingWait = new GpuStream() {

			@Override
			public void copy(GpuBuffer source, long sourceOffset, GpuBuffer target, long targetOffset, long bytes) {
				stream.copy(source, sourceOffset, target, targetOffset, bytes);
			}

			@Override
			public void fill(GpuBuffer target, long offset, long bytes, byte value) {
				stream.fill(target, offset, bytes, value);
			}

			@Override
			public void prefetchToDevice(GpuBuffer buffer) {
				stream.prefetchToDevice(buffer);
			}

			@Override
			public void prefetchToHost(GpuBuffer buffer) {
				stream.prefetchToHost(buffer);
			}

			@Override
			public GpuEvent record() {
				return stream.record();
			}

			@Override
			public void synchronize() {
				throw new CancellationException("the wait was interrupted");
			}

			@Override
			public boolean isClosed() {
				return stream.isClosed();
			}

			@Override
			public void close() {
				stream.close();
			}

		};
		ReductionBuffer buffer = this.cache.acquire(float.class, 4, ReductionOp.SUM, failingWait);

		assertThatExceptionOfType(CancellationException.class).isThrownBy(buffer::close);

		assertThat(this.cache.statistics().cachedBuffers()).isZero();
		assertThat(this.cache.statistics().inUseBuffers()).isZero();
		assertThat(this.device.statistics().inUseBuffers()).isZero();
		assertThat(this.device.statistics().cachedBuffers()).isEqualTo(1);
		stream.close();
	}

	@ParameterizedTest
	@MethodSource("backends")
	void badKeysAndClosedBuffersAreRefusedClearly(Supplier<GpuBackend> backend) {
		open(backend);
		assertThatIllegalArgumentException().isThrownBy(() -> this.cache.acquire(byte.class, 4, ReductionOp.SUM))
			.withMessageContaining("not byte");
		assertThatIllegalArgumentException().isThrownBy(() -> this.cache.acquire(float.class, 0, ReductionOp.SUM))
			.withMessageContaining("at least one slot");
		ReductionBuffer buffer = this.cache.acquire(int.class, 2, ReductionOp.MAX);
		buffer.close();
		buffer.close();
		assertThatIllegalStateException().isThrownBy(() -> buffer.readResult(0));
		assertThat(this.cache.statistics().returns()).isEqualTo(1);
	}

	@ParameterizedTest
	@MethodSource("backends")
	void manyThreadsKeepTheBooksExact(Supplier<GpuBackend> backend) throws Exception {
		open(backend);
		ExecutorService executor = Executors.newFixedThreadPool(4);
		List<Future<?>> workers = new ArrayList<>();
		for (int t = 0; t < 4; t++) {
			long seed = t;
			workers.add(executor.submit(() -> {
				SplittableRandom random = new SplittableRandom(seed);
				for (int i = 0; i < 2000; i++) {
					ReductionOp op = ReductionOp.values()[random.nextInt(4)];
					try (ReductionBuffer buffer = this.cache.acquire(float.class, 1 + random.nextInt(4), op)) {
						assertThat(buffer.readResult(0)).isEqualTo(expectedIdentity(ElementType.FLOAT, op));
						buffer.fill((byte) 1);
					}
				}
				return null;
			}));
		}
		for (Future<?> worker : workers) {
			worker.get(1, TimeUnit.MINUTES);
		}
		executor.shutdown();
		PoolStatistics stats = this.cache.statistics();
		assertThat(stats.requests()).isEqualTo(8000).isEqualTo(stats.hits() + stats.misses());
		assertThat(stats.returns()).isEqualTo(8000);
		assertThat(stats.inUseBuffers()).isZero();
		assertThat(stats.cachedBytes()).isEqualTo(stats.reservedBytes());
		assertThat(stats.cachedBuffers()).isLessThanOrEqualTo(16 * 4);
	}

	private static Number expectedIdentity(ElementType type, ReductionOp op) {
		Number[] identities = switch (type) {
			case INT -> new Number[] { 0, 1, Integer.MAX_VALUE, Integer.MIN_VALUE };
			case LONG -> new Number[] { 0L, 1L, Long.MAX_VALUE, Long.MIN_VALUE };
			case FLOAT -> new Number[] { 0f, 1f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY };
			case DOUBLE -> new Number[] { 0d, 1d, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY };
			case BYTE -> throw new IllegalArgumentException();
		};
		return identities[List.of(ReductionOp.SUM, ReductionOp.PRODUCT, ReductionOp.MIN, ReductionOp.MAX).indexOf(op)];
	}

}
