package io.gpumem.pool;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.gpumem.allocator.TrackingAllocator;
import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryKind;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The pool's classes cut from shared segments, on the host backend and on CUDA's fake driver, for
 * device and pinned memory: memory freed by one size serves another, and a trim gives back whole
 * segments and reports exactly what the backend got back.
 */
class SharedSegmentsTest {

	private static final long MIB = 1L << 20;

	private static final long CAPACITY = 512 * MIB;

	private GpuBackend backend;

	private StratifiedMemoryPool pool;

	static Stream<Arguments> backends() {
		Supplier<GpuBackend> host = () -> new HostBackend(CAPACITY, CAPACITY);
		Supplier<GpuBackend> cuda = () -> CudaBackend.open(new FakeCudaDriver(CAPACITY), 0);
		return Stream.of(MemoryKind.DEVICE, MemoryKind.PINNED)
			.flatMap((kind) -> Stream.of(Arguments.of(Named.of("host", host), kind),
					Arguments.of(Named.of("cuda on the fake driver", cuda), kind)));
	}

	@AfterEach
	void close() {
		if (this.pool != null) {
			this.pool.close();
		}
		if (this.backend != null) {
			this.backend.close();
		}
	}

	private TrackingAllocator open(Supplier<GpuBackend> backend, MemoryKind kind) {
		this.backend = backend.get();
		TrackingAllocator tracking = new TrackingAllocator(this.backend.allocator(kind), false);
		this.pool = new StratifiedMemoryPool(tracking, PoolConfig.builder("shared").build());
		return tracking;
	}

	@ParameterizedTest
	@MethodSource("backends")
	void memoryFreedByOneSizeServesAnother(Supplier<GpuBackend> backend, MemoryKind kind) {
		TrackingAllocator tracking = open(backend, kind);
		List<PooledBuffer> quarters = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			quarters.add(this.pool.acquire(MIB / 2));
		}
		assertThat(tracking.outstanding()).as("one 2 MiB segment").hasSize(1);
		quarters.forEach(PooledBuffer::close);
		try (PooledBuffer big = this.pool.acquire(3 * MIB / 2); PooledBuffer small = this.pool.acquire(300_000)) {
			assertThat(tracking.outstanding()).as("both cut from the freed segment").hasSize(1);
			assertThat(this.pool.statistics().misses()).isEqualTo(1);
			assertThat(this.pool.statistics().hits()).isEqualTo(5);
		}
		assertThat(this.pool.statistics().segments())
			.isEqualTo(new PoolStatistics.Segments(1, 2 * MIB, 2 * MIB, 2 * MIB, 0));
	}

	@ParameterizedTest
	@MethodSource("backends")
	void aTrimOfAFragmentedArenaReportsExactlyWhatTheBackendGotBack(Supplier<GpuBackend> backend, MemoryKind kind) {
		TrackingAllocator tracking = open(backend, kind);
		SplittableRandom random = new SplittableRandom(15);
		List<PooledBuffer> kept = new ArrayList<>();
		for (int i = 0; i < 400; i++) {
			long size = (long) Math.exp(Math.log(1024) + random.nextDouble() * Math.log(3072));
			PooledBuffer buffer = this.pool.acquire(size);
			buffer.fill((byte) i);
			if (i % 3 == 0) {
				kept.add(buffer);
			}
			else {
				buffer.close();
			}
			if (i % 50 == 49) {
				this.pool.acquire(6 * MIB).close();
			}
		}
		PoolStatistics fragmented = this.pool.statistics();
		PoolStatistics.Segments segments = fragmented.segments();
		assertThat(segments.segments()).isEqualTo(tracking.outstanding().size());
		assertThat(fragmented.reservedBytes()).isEqualTo(tracking.outstandingBytes());
		assertThat(segments.freeBytes()).isPositive();
		assertThat(segments.fragmentation()).as("free bytes in several runs").isBetween(0.01, 1.0);

		long released = this.pool.trim(0);
		PoolStatistics trimmed = this.pool.statistics();
		assertThat(trimmed.reservedBytes()).as("what the pool says it holds is what the backend lent")
			.isEqualTo(tracking.outstandingBytes());
		assertThat(released).as("what the trim reports is what the backend got back")
			.isEqualTo(fragmented.reservedBytes() - tracking.outstandingBytes())
			.isEqualTo(trimmed.trimmedBytes() - fragmented.trimmedBytes());
		assertThat(trimmed.segments().segments()).as("only segments with a buffer still lent")
			.isEqualTo(tracking.outstanding().size())
			.isLessThan(segments.segments());
		assertThat(trimmed.inUseBytes() + trimmed.cachedBytes()).isEqualTo(trimmed.reservedBytes());
		for (int i = 0; i < kept.size(); i++) {
			byte[] content = new byte[(int) kept.get(i).size()];
			kept.get(i).copyTo(content);
			assertThat(content).as("a kept buffer is untouched by the trim").containsOnly((byte) (3 * i));
		}

		kept.forEach(PooledBuffer::close);
		assertThat(this.pool.trim(0)).isEqualTo(trimmed.reservedBytes());
		assertThat(tracking.outstanding()).isEmpty();
		assertThat(this.pool.statistics().segments()).isEqualTo(PoolStatistics.Segments.NONE);
	}

}
