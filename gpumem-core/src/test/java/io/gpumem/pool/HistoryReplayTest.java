package io.gpumem.pool;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;

import io.gpumem.allocator.BookkeepingAllocator;
import io.gpumem.allocator.StatisticsAllocator;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.advice.HistoryReplay;
import io.gpumem.pool.diagnostics.BufferRecording;
import io.gpumem.pool.diagnostics.HistoryConfig;
import io.gpumem.pool.diagnostics.PoolHistory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * A recorded history replayed: under the recorded settings it reproduces the recorded peak, under others it
 * predicts what a real run with them reserves, and against a smaller device it says the pool would run out.
 */
class HistoryReplayTest {

	private static final long MIB = 1L << 20;

	private static final long CAPACITY = 1L << 30;

	/** How long a thread works between two of its operations, as a request does with its buffers. */
	private static final long WORK_NANOS = 50_000;

	@Test
	void underTheRecordedSettingsTheReplayOfOneThreadsLogReproducesTheRecordedRunExactly() throws Exception {
		Run recorded = run(PoolConfig.builder("recorded"), 1);
		HistoryReplay.ReplayResult replay = HistoryReplay.replay(recorded.history(), PoolConfig.builder("r").build(),
				CAPACITY);
		assertThat(replay.acquires()).isEqualTo(recorded.acquires());
		assertThat(replay.failures()).isZero();
		assertThat(replay.recordedPeakReservedBytes()).isEqualTo(recorded.peakReservedBytes());
		assertThat(replay.peakReservedBytes()).isEqualTo(recorded.peakReservedBytes());
		assertThat(replay.freshAllocations()).isEqualTo(recorded.freshAllocations());
		assertThat(replay.heldPerLent()).isGreaterThanOrEqualTo(1.0);
	}

	@Test
	void theLogOfManyThreadsReplaysEveryAcquireFromTheRecordedPeak() throws Exception {
		Run recorded = run(PoolConfig.builder("recorded"), 4);
		HistoryReplay.ReplayResult replay = HistoryReplay.replay(recorded.history(), PoolConfig.builder("r").build(),
				CAPACITY);
		assertThat(replay.acquires()).isEqualTo(recorded.acquires());
		assertThat(replay.failures()).isZero();
		assertThat(replay.recordedPeakReservedBytes()).isEqualTo(recorded.peakReservedBytes());
		assertThat(replay.peakReservedBytes()).as("at least what was lent at once")
			.isGreaterThanOrEqualTo(replay.peakLentBytes());
	}

	@Test
	void aLogThatDroppedItsFirstEventsIsNotReplayed() throws Exception {
		Run recorded = run(PoolConfig.builder("recorded"), 1);
		PoolHistory truncated = new PoolHistory("recorded", false, recorded.history().events().subList(10, 20));
		assertThat(recorded.history().complete()).isTrue();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> HistoryReplay.replay(truncated, PoolConfig.builder("r").build(), CAPACITY))
			.withMessageContaining("dropped its first events");
	}

	@Test
	void anotherSettingsReplayPredictsWhatARealRunWithThemReserves() throws Exception {
		Run recorded = run(PoolConfig.builder("recorded"), 1);
		HistoryReplay.ReplayResult predicted = HistoryReplay.replay(recorded.history(),
				PoolConfig.builder("r").segmentSize(64 * MIB).build(), CAPACITY);
		Run confirmed = run(PoolConfig.builder("large-segments").segmentSize(64 * MIB), 1);
		assertThat(predicted.peakReservedBytes()).as("64 MiB segments change the peak")
			.isNotEqualTo(recorded.peakReservedBytes());
		assertThat(confirmed.peakReservedBytes()).isEqualTo(predicted.peakReservedBytes());
	}

	@Test
	void againstASmallerDeviceTheReplaySaysThePoolWouldRunOut() throws Exception {
		Run recorded = run(PoolConfig.builder("recorded"), 1);
		HistoryReplay.ReplayResult replay = HistoryReplay.replay(recorded.history(), PoolConfig.builder("r").build(),
				recorded.peakReservedBytes() / 2);
		assertThat(replay.ranOut()).isTrue();
		assertThat(replay.failures()).isPositive().isLessThan(replay.acquires());
		assertThat(replay.peakReservedBytes()).isLessThanOrEqualTo(recorded.peakReservedBytes() / 2);
	}

	@Test
	void anAcquireThatWaitedForACloseWaitsForItInTheReplayToo() throws Exception {
		PoolConfig.Builder waiting = PoolConfig.builder("waiting").maxWait(Duration.ofSeconds(10));
		PoolHistory log;
		try (HostBackend backend = new HostBackend(8 * MIB);
				StratifiedMemoryPool pool = new StratifiedMemoryPool(backend.allocator(MemoryKind.DEVICE),
						waiting.history(new HistoryConfig(BufferRecording.ALL, 100)).build())) {
			PooledBuffer held = pool.acquire(6 * MIB);
			ExecutorService thread = Executors.newSingleThreadExecutor();
			try {
				Future<PooledBuffer> waiter = thread.submit(() -> pool.acquire(4 * MIB));
				await().atMost(Duration.ofMinutes(1)).until(() -> pool.statistics().memoryWaits().waits() > 0);
				held.close();
				waiter.get(10, TimeUnit.SECONDS).close();
			}
			finally {
				thread.shutdownNow();
			}
			log = pool.history().orElseThrow();
		}
		HistoryReplay.ReplayResult replay = HistoryReplay.replay(log, waiting.build(), 8 * MIB);
		assertThat(replay.failures()).as("served by the close it waited for").isZero();
		assertThat(replay.waits()).isEqualTo(1);
		HistoryReplay.ReplayResult impatient = HistoryReplay.replay(log,
				PoolConfig.builder("impatient").maxWait(Duration.ZERO).build(), 8 * MIB);
		assertThat(impatient.failures()).as("with max-wait 0 it would have failed").isEqualTo(1);
	}

	@Test
	void theBookkeepingAllocatorBooksTheCapacityAndHoldsNoMemory() {
		BookkeepingAllocator allocator = new BookkeepingAllocator(MemoryKind.DEVICE, 10 * MIB);
		Allocation first = allocator.allocate(6 * MIB);
		assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> allocator.allocate(6 * MIB))
			.withMessageContaining("Out of DEVICE memory: tried to allocate 6.00 MiB");
		assertThat(allocator.memoryInfo().freeBytes()).isEqualTo(4 * MIB);
		Allocation slice = first.slice(MIB, MIB);
		assertThat(slice.size()).isEqualTo(MIB);
		assertThatExceptionOfType(UnsupportedOperationException.class).isThrownBy(() -> first.fill(0, 1, (byte) 0));
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> allocator.free(slice));
		allocator.free(first);
		assertThatExceptionOfType(IllegalArgumentException.class).as("freed twice").isThrownBy(() -> allocator.free(first));
		assertThat(allocator.allocate(10 * MIB).size()).isEqualTo(10 * MIB);
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> allocator.free(new BookkeepingAllocator(MemoryKind.DEVICE, MIB).allocate(1)));
	}

	/**
	 * Threads each keeping up to 12 buffers of 1 KiB to 8 MiB (log-uniform), closing the oldest at random,
	 * 3000 operations each with some work between them, on a host pool recording every buffer: the acquires, and the peak reserved bytes.
	 */
	private static Run run(PoolConfig.Builder builder, int threadCount) throws Exception {
		try (HostBackend backend = new HostBackend(CAPACITY)) {
			StatisticsAllocator allocator = new StatisticsAllocator(backend.allocator(MemoryKind.DEVICE));
			try (StratifiedMemoryPool pool = new StratifiedMemoryPool(allocator,
					builder.history(new HistoryConfig(BufferRecording.ALL, 1 << 17)).build())) {
				ExecutorService threads = Executors.newFixedThreadPool(threadCount);
				try {
					List<Future<Long>> work = new ArrayList<>();
					for (int t = 0; t < threadCount; t++) {
						long seed = t;
						work.add(threads.submit(() -> work(pool, new SplittableRandom(seed))));
					}
					long acquires = 0;
					for (Future<Long> each : work) {
						acquires += each.get();
					}
					return new Run(pool.history().orElseThrow(), acquires, allocator.statistics().peakBytes(),
							allocator.statistics().totalCount());
				}
				finally {
					threads.shutdownNow();
				}
			}
		}
	}

	private static long work(StratifiedMemoryPool pool, SplittableRandom random) {
		Deque<PooledBuffer> held = new ArrayDeque<>();
		long acquires = 0;
		for (int i = 0; i < 3000; i++) {
			if (held.size() >= 12 || (!held.isEmpty() && random.nextInt(3) == 0)) {
				held.removeFirst().close();
			}
			else {
				held.addLast(pool.acquire((long) Math.pow(2, random.nextDouble(10, 23))));
				acquires++;
			}
			LockSupport.parkNanos(WORK_NANOS);
		}
		held.forEach(PooledBuffer::close);
		return acquires;
	}

	private record Run(PoolHistory history, long acquires, long peakReservedBytes, long freshAllocations) {
	}

}
