package io.gpumem.pool;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import io.gpumem.allocator.AllocatorDecorator;
import io.gpumem.allocator.LimitingAllocator;
import io.gpumem.allocator.StatisticsAllocator;
import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.memory.MemoryKind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A request larger than the device or the budget fails at once, on either arena and either backend: the allocator is
 * not asked, nothing is mapped, trimmed, waited for or collected, and the failure names the bytes asked and the
 * device's true free memory (as PyTorch's {@code malloc} refuses a request above the device's capacity).
 */
class BeyondReachTest {

	private static final long MIB = 1L << 20;

	private final List<AutoCloseable> opened = new ArrayList<>();

	static Stream<Arguments> devices() {
		List<Named<LongFunction<GpuBackend>>> backends = List.of(Named.of("host", HostBackend::new),
				Named.of("cuda on the fake driver", (capacity) -> CudaBackend.open(new FakeCudaDriver(capacity), 0)));
		List<Named<Function<GpuBackend, MemoryAllocator>>> arenas = List.of(
				Named.of("expandable segments", (backend) -> backend.virtualMemory().allocator()),
				Named.of("fixed segments", (backend) -> backend.allocator(MemoryKind.DEVICE)));
		List<Named<Long>> devices = List.of(Named.of("a 128 MiB device", 128 * MIB),
				Named.of("a 1 GiB device with a budget of 128 MiB", 1024 * MIB));
		List<Arguments> all = new ArrayList<>();
		backends.forEach((backend) -> arenas.forEach((arena) -> devices
			.forEach((device) -> all.add(Arguments.of(backend, arena, device)))));
		return all.stream();
	}

	@ParameterizedTest(name = "{0}, {1}, {2}")
	@MethodSource("devices")
	void aRequestAboveTheCapacityOrTheBudgetFailsAtOnce(LongFunction<GpuBackend> backends,
			Function<GpuBackend, MemoryAllocator> arena, long capacity) {
		GpuBackend backend = open(backends.apply(capacity));
		MemoryAllocator device = arena.apply(backend);
		StatisticsAllocator counted = new StatisticsAllocator(
				(capacity > 128 * MIB) ? new LimitingAllocator(device, 128 * MIB) : device);
		StratifiedMemoryPool pool = open(new StratifiedMemoryPool(counted, PoolConfig.builder("device").build()));
		PooledBuffer lent = open(pool.acquire(4096));
		pool.acquire(MIB).close();
		long cached = pool.cachedBytes();
		long allocations = counted.statistics().totalCount();
		assertThatExceptionOfType(GpuOutOfMemoryException.class)
			.isThrownBy(() -> pool.acquire(256 * MIB, Duration.ofSeconds(5)))
			.satisfies((ex) -> {
				MemoryInfo info = backend.allocator(MemoryKind.DEVICE).memoryInfo();
				assertThat(ex.diagnostic().requestedBytes()).isEqualTo(256 * MIB);
				assertThat(ex.diagnostic().freeBytes()).isEqualTo(info.freeBytes());
				assertThat(ex.diagnostic().exceedsCapacity()).isTrue();
				assertThat(ex.getMessage()).contains("tried to allocate 256.00 MiB",
						"of which " + ByteSizes.format(info.freeBytes()) + " is free");
			});
		assertThat(counted.statistics().totalCount()).as("the allocator was not asked").isEqualTo(allocations);
		assertThat(pool.cachedBytes()).as("nothing trimmed for it").isEqualTo(cached);
		PoolStatistics statistics = pool.statistics();
		assertThat(statistics.trimmedBytes()).isZero();
		assertThat(statistics.memoryWaits().waits()).as("no wait").isZero();
		assertThat(statistics.memoryWaits().gcRequests()).as("no collection").isZero();
		assertThat(statistics.allocationFailures()).isEqualTo(1);
		assertThat(lent.size()).isEqualTo(4096);
	}

	/** Unified memory may exceed the device, which pages it (CUDA's oversubscription): only a budget refuses at once. */
	@ParameterizedTest(name = "{0}")
	@ValueSource(booleans = { false, true })
	void aUnifiedRequestAboveTheDeviceIsLeftToTheDriverAndOnlyABudgetRefusesIt(boolean budget) {
		HostBackend host = open(new HostBackend(1024 * MIB));
		MemoryAllocator unified = new AllocatorDecorator(host.allocator(MemoryKind.DEVICE)) {

			@Override
			public MemoryKind kind() {
				return MemoryKind.UNIFIED;
			}

			@Override
			public MemoryInfo memoryInfo() {
				return new MemoryInfo(128 * MIB, 128 * MIB);
			}

		};
		MemoryAllocator allocator = budget ? new LimitingAllocator(unified, 128 * MIB) : unified;
		StratifiedMemoryPool pool = open(new StratifiedMemoryPool(allocator, PoolConfig.builder("unified").build()));
		if (budget) {
			assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> pool.acquire(256 * MIB))
				.satisfies((ex) -> assertThat(ex.getMessage()).contains("larger than the budget, refused at once"));
			return;
		}
		try (PooledBuffer paged = pool.acquire(256 * MIB)) {
			assertThat(paged.capacity()).isGreaterThanOrEqualTo(256 * MIB);
		}
	}

	@AfterEach
	void close() throws Exception {
		for (int i = this.opened.size() - 1; i >= 0; i--) {
			this.opened.get(i).close();
		}
	}

	private <T extends AutoCloseable> T open(T closeable) {
		this.opened.add(closeable);
		return closeable;
	}

}
