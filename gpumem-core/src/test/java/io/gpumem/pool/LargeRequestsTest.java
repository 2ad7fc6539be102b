package io.gpumem.pool;

import java.util.function.Supplier;
import java.util.stream.Stream;

import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.gpumem.allocator.StatisticsAllocator;
import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryKind;

import static org.assertj.core.api.Assertions.assertThat;

/** Requests above the top class, as a service repeating a large one makes them: allocated once, not each time. */
class LargeRequestsTest {

	private static final long MB_100 = 100_000_000L;

	static Stream<Arguments> backendsAndKinds() {
		Supplier<GpuBackend> host = () -> new HostBackend(1L << 30);
		Supplier<GpuBackend> cuda = () -> CudaBackend.open(new FakeCudaDriver(1L << 30), 0);
		return Stream.of(Named.of("host", host), Named.of("cuda on the fake driver", cuda))
			.flatMap((backend) -> Stream.of(MemoryKind.DEVICE, MemoryKind.PINNED)
				.map((kind) -> Arguments.of(backend, kind)));
	}

	@ParameterizedTest(name = "{0}, {1}")
	@MethodSource("backendsAndKinds")
	void aHundredRoundsOf100MbMakeOneBackendAllocationAndATrimGivesItBack(Supplier<GpuBackend> backends,
			MemoryKind kind) {
		try (GpuBackend backend = backends.get()) {
			StatisticsAllocator counted = new StatisticsAllocator(backend.allocator(kind));
			try (StratifiedMemoryPool pool = new StratifiedMemoryPool(counted, PoolConfig.builder("large").build())) {
				for (int round = 0; round < 100; round++) {
					try (PooledBuffer buffer = pool.acquire(MB_100 - round * 1000)) {
						buffer.fill(0, 4096, (byte) round);
					}
				}
				assertThat(counted.statistics().totalCount()).isEqualTo(1);
				PoolStatistics stats = pool.statistics();
				assertThat(stats.requests()).isEqualTo(100);
				assertThat(stats.hits()).isEqualTo(99);
				assertThat(stats.cachedBytes()).isEqualTo(MB_100);
				assertThat(counted.statistics().currentBytes()).isEqualTo(MB_100);
				assertThat(pool.trim(0)).isEqualTo(MB_100);
				assertThat(counted.statistics().currentBytes()).isZero();
				if (kind == MemoryKind.DEVICE) {
					assertThat(backend.memoryInfo().usedBytes()).as("the device got it back").isZero();
				}
			}
		}
	}

}
