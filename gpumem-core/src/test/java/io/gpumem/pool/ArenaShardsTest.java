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
import io.gpumem.pool.arena.Arenas;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The arena's shards over expandable segments: each thread's stripe picks one, and none strands memory another
 * could use.
 */
class ArenaShardsTest {

	private static final long MIB = 1L << 20;

	private final HostBackend backend = new HostBackend(256 * MIB);

	private final StatisticsAllocator physical = new StatisticsAllocator(this.backend.virtualMemory().allocator());

	private final StratifiedMemoryPool pool = new StratifiedMemoryPool(this.physical,
			PoolConfig.builder("shards").stripes(4).build());

	/** Two threads, on two stripes and so two shards. */
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
	void aRequestTakesAFitAnotherShardHoldsBeforeItsOwnMapsMore() {
		on(this.first, () -> this.pool.acquire(8 * MIB).close());
		long allocations = this.physical.statistics().totalCount();
		on(this.second, () -> this.pool.acquire(8 * MIB).close());
		assertThat(this.physical.statistics().totalCount()).as("nothing mapped for the second").isEqualTo(allocations);
		assertThat(this.pool.reservedBytes()).isEqualTo(8 * MIB);
	}

	/**
	 * A shard that maps unmaps nothing to make room first, in another shard or its own (on a GPU each unmap is a driver
	 * call, and the granule is soon wanted again): the other shard's free granules stay mapped until a trim.
	 */
	@Test
	void aShardThatMapsLeavesTheOthersFreeGranulesMappedUntilATrim() {
		on(this.first, () -> this.pool.acquire(8 * MIB).close());
		long allocations = this.physical.statistics().totalCount();
		on(this.second, () -> {
			try (PooledBuffer larger = this.pool.acquire(16 * MIB)) {
				assertThat(this.physical.statistics().totalCount() - allocations)
					.as("the second shard mapped eight granules of its own").isEqualTo(8);
				assertThat(this.pool.reservedBytes()).as("the first shard's free 8 MiB still mapped").isEqualTo(24 * MIB);
			}
		});
		this.pool.trim(0);
		assertThat(this.pool.reservedBytes()).isZero();
		assertThat(this.pool.statistics().segments().addressBytes()).isZero();
	}

	/**
	 * No shard has a mapped fit for 3 MiB, but the free half of the first thread's granule, at the end of what its
	 * shard maps, takes it with one granule more where the second thread's own shard would map two.
	 */
	@Test
	void aRequestThatMustMapDoesSoInTheShardWhereItMapsTheFewestGranules() {
		PooledBuffer half = on(this.first, () -> this.pool.acquire(MIB));
		long allocations = this.physical.statistics().totalCount();
		PooledBuffer larger = on(this.second, () -> this.pool.acquire(3 * MIB));
		assertThat(this.physical.statistics().totalCount() - allocations).as("one granule mapped").isEqualTo(1);
		assertThat(this.pool.reservedBytes()).as("two granules for 4 MiB lent").isEqualTo(4 * MIB);
		assertThat(this.pool.statistics().segments().addressBytes()).as("the first shard's range alone")
			.isEqualTo(256 * MIB);
		on(this.second, larger::close);
		half.close();
		this.pool.trim(0);
		assertThat(this.pool.reservedBytes()).isZero();
	}

	@Test
	void twoThreadsCutFromShardsOfTheirOwn() {
		PooledBuffer first = on(this.first, () -> this.pool.acquire(4 * MIB));
		PooledBuffer second = on(this.second, () -> this.pool.acquire(4 * MIB));
		assertThat(this.pool.statistics().segments().addressBytes()).as("a range in each thread's shard")
			.isEqualTo(2 * 256 * MIB);
		on(this.second, first::close);
		on(this.first, second::close);
		this.pool.trim(0);
		assertThat(this.pool.reservedBytes()).isZero();
	}

	@Test
	void theBlocksTheFreeListsKeepAreCutFromTheFirstShardWhateverTheThread() {
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

	/**
	 * A thread whose blocks keep fitting in the free half of another thread's granule takes them from that shard
	 * {@value Arenas#MAX_FOREIGN_TAKES} times in a row, then maps a granule of its own.
	 */
	@Test
	void aThreadThatKeepsTakingFromAnotherShardGrowsItsOwn() {
		PooledBuffer held = on(this.first, () -> this.pool.acquire(MIB));
		long allocations = this.physical.statistics().totalCount();
		on(this.second, () -> cycle(Arenas.MAX_FOREIGN_TAKES));
		assertThat(this.physical.statistics().totalCount()).as("the free half of the first thread's granule")
			.isEqualTo(allocations);
		on(this.second, () -> cycle(Arenas.MAX_FOREIGN_TAKES));
		assertThat(this.physical.statistics().totalCount() - allocations).as("one granule of its own").isEqualTo(1);
		assertThat(this.pool.statistics().segments().addressBytes()).as("a range in each thread's shard")
			.isEqualTo(2 * 256 * MIB);
		held.close();
		this.pool.trim(0);
		assertThat(this.pool.reservedBytes()).isZero();
	}

	/**
	 * The same where the other shard's fit lies on a granule wholly free, which the fit would map no more but lend:
	 * after {@value Arenas#MAX_FOREIGN_TAKES} takes, the thread maps two granules of its own rather than go on taking it.
	 */
	@Test
	void aThreadThatKeepsTakingAWholeFreeGranuleFromAnotherShardGrowsItsOwn() {
		PooledBuffer held = on(this.first, () -> this.pool.acquire(MIB));
		on(this.first, () -> this.pool.acquire(3 * MIB).close());
		long allocations = this.physical.statistics().totalCount();
		on(this.second, () -> cycle(2 * Arenas.MAX_FOREIGN_TAKES, 3 * MIB));
		assertThat(this.physical.statistics().totalCount() - allocations).as("two granules of its own").isEqualTo(2);
		assertThat(this.pool.statistics().segments().addressBytes()).as("a range in each thread's shard")
			.isEqualTo(2 * 256 * MIB);
		held.close();
		this.pool.trim(0);
		assertThat(this.pool.reservedBytes()).isZero();
	}

	/** On a full device, a thread whose own shard cannot grow still takes another shard's fit, however often. */
	@Test
	void aThreadWhoseShardCannotGrowTakesAnotherShardsFit() {
		PooledBuffer small = on(this.first, () -> this.pool.acquire(MIB));
		PooledBuffer large = on(this.first, () -> this.pool.acquire(254 * MIB));
		assertThat(this.backend.memoryInfo().freeBytes()).as("the device full, 1 MiB of it free in a granule")
			.isZero();
		on(this.second, () -> cycle(2 * Arenas.MAX_FOREIGN_TAKES));
		assertThat(this.pool.reservedBytes()).isEqualTo(256 * MIB);
		small.close();
		large.close();
	}

	private void cycle(int times) {
		cycle(times, MIB);
	}

	private void cycle(int times, long bytes) {
		for (int i = 0; i < times; i++) {
			this.pool.acquire(bytes).close();
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
