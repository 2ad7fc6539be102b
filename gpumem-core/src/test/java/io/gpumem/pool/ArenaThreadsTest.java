package io.gpumem.pool;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.allocator.StatisticsAllocator;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.arena.Arena;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One arena for every thread, over expandable and fixed segments: what one thread frees serves another's request
 * with nothing allocated, and no thread holds memory of its own that another could use.
 */
class ArenaThreadsTest {

	private static final long MIB = 1L << 20;

	private final HostBackend backend = new HostBackend(256 * MIB);

	private final StatisticsAllocator physical = new StatisticsAllocator(this.backend.virtualMemory().allocator());

	private final StratifiedMemoryPool pool = new StratifiedMemoryPool(this.physical,
			PoolConfig.builder("threads").stripes(4).build());

	/** Two threads, on two stripes of the free lists. */
	private final ExecutorService first = Executors.newSingleThreadExecutor();

	private final ExecutorService second = Executors.newSingleThreadExecutor();

	@AfterEach
	void close() throws InterruptedException {
		this.first.shutdown();
		this.second.shutdown();
		assertThat(this.first.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
		assertThat(this.second.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
		this.pool.close();
		assertThat(this.backend.memoryInfo().freeBytes()).isEqualTo(256 * MIB);
	}

	@Test
	void granulesOneThreadFreedServeAnotherThreadWithNothingMapped() {
		on(this.first, () -> this.pool.acquire(8 * MIB).close());
		long allocations = this.physical.statistics().totalCount();
		on(this.second, () -> this.pool.acquire(8 * MIB).close());
		assertThat(this.physical.statistics().totalCount()).as("nothing mapped for the second").isEqualTo(allocations);
		assertThat(this.pool.reservedBytes()).isEqualTo(8 * MIB);
	}

	@Test
	void twoThreadsCutFromOneRangeAndShareItsGranules() {
		PooledBuffer first = on(this.first, () -> this.pool.acquire(3 * MIB));
		PooledBuffer second = on(this.second, () -> this.pool.acquire(MIB));
		assertThat(this.pool.statistics().segments().addressBytes()).as("one range").isEqualTo(256 * MIB);
		assertThat(this.pool.reservedBytes()).as("the second in the free part of the first's step")
			.isEqualTo(Arena.mappingStep(PoolConfig.DEFAULT_MAPPING_STEP_BYTES, 2 * MIB));
		on(this.second, first::close);
		on(this.first, second::close);
		this.pool.trim(0);
		assertThat(this.pool.reservedBytes()).isZero();
	}

	@Test
	void theBlocksTheFreeListsKeepShareAGranuleWhateverTheThread() {
		List<PooledBuffer> granuleFull = on(this.first, () -> {
			List<PooledBuffer> buffers = new ArrayList<>();
			for (int i = 0; i < 32; i++) {
				buffers.add(this.pool.acquire(64 * 1024));
			}
			return buffers;
		});
		PooledBuffer second = on(this.second, () -> this.pool.acquire(64 * 1024));
		assertThat(this.pool.statistics().segments().addressBytes()).as("one range").isEqualTo(256 * MIB);
		assertThat(this.pool.reservedBytes()).as("a second granule of it").isEqualTo(4 * MIB);
		granuleFull.forEach(PooledBuffer::close);
		second.close();
	}

	/** On a full device, a thread's requests keep taking the free half of a granule another thread maps. */
	@Test
	void onAFullDeviceAThreadTakesTheFreeHalfOfAnotherThreadsGranule() {
		PooledBuffer small = on(this.first, () -> this.pool.acquire(MIB));
		PooledBuffer large = on(this.first, () -> this.pool.acquire(254 * MIB));
		assertThat(this.backend.memoryInfo().freeBytes()).as("the device full, 1 MiB of it free in a granule")
			.isZero();
		on(this.second, () -> cycle(128));
		assertThat(this.pool.reservedBytes()).isEqualTo(256 * MIB);
		small.close();
		large.close();
	}

	/** Over fixed segments, a segment one thread freed serves another thread's request with nothing allocated. */
	@Test
	void overFixedSegmentsASegmentOneThreadFreedServesAnotherThread() {
		StatisticsAllocator device = new StatisticsAllocator(this.backend.allocator(MemoryKind.DEVICE));
		StratifiedMemoryPool fixed = new StratifiedMemoryPool(device, PoolConfig.builder("fixed").stripes(4).build());
		try {
			on(this.first, () -> fixed.acquire(4 * MIB).close());
			long allocations = device.statistics().totalCount();
			PooledBuffer second = on(this.second, () -> fixed.acquire(3 * MIB));
			assertThat(device.statistics().totalCount()).as("nothing allocated for the second").isEqualTo(allocations);
			assertThat(fixed.reservedBytes()).isEqualTo(4 * MIB);
			on(this.second, second::close);
		}
		finally {
			fixed.close();
		}
	}

	private void cycle(int times) {
		for (int i = 0; i < times; i++) {
			this.pool.acquire(MIB).close();
		}
	}

	private static <T> T on(ExecutorService thread, Callable<T> task) {
		return CompletableFuture.supplyAsync(() -> {
			try {
				return task.call();
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		}, thread).join();
	}

	private static void on(ExecutorService thread, Runnable task) {
		CompletableFuture.runAsync(task, thread).join();
	}

}
