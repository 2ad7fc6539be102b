package io.gpumem.pool;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.allocator.StatisticsAllocator;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.diagnostics.BufferRecording;
import io.gpumem.pool.diagnostics.HistoryConfig;
import io.gpumem.pool.diagnostics.MemoryEvent.Type;
import io.gpumem.pool.diagnostics.MemoryEvent;
import io.gpumem.pool.diagnostics.PoolHistory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.tuple;

/**
 * A pool's bounded history: the last events in order, each acquire of a recorded buffer matched by its close,
 * segments counted to the reserved bytes, trims and failures told, from many threads at once.
 */
class MemoryHistoryTest {

	private static final long MIB = 1L << 20;

	private final HostBackend backend = new HostBackend(64 * MIB);

	private final StatisticsAllocator allocator = new StatisticsAllocator(this.backend.allocator(MemoryKind.DEVICE));

	private final List<StratifiedMemoryPool> pools = new ArrayList<>();

	@AfterEach
	void close() {
		this.pools.forEach(StratifiedMemoryPool::close);
		this.backend.close();
	}

	@Test
	void recordsAcquiresClosesSegmentsTrimsAndFailuresInOrder() {
		StratifiedMemoryPool pool = pool(BufferRecording.ALL, 1000);
		PooledBuffer small = pool.acquire(3000);
		PooledBuffer large = pool.acquire(3 * MIB);
		ManualStream stream = new ManualStream();
		small.closeAfter(stream);
		stream.finish();
		large.close();
		long released = pool.trim(0);
		assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> pool.acquire(100 * MIB));
		List<MemoryEvent> events = pool.history().orElseThrow().events();
		assertThat(events).extracting(MemoryEvent::sequence).isSorted().doesNotHaveDuplicates();
		assertThat(events).extracting(MemoryEvent::type)
			.as("an acquire before the segment allocated for it; a close once its block is back")
			.containsSubsequence(Type.ACQUIRE, Type.SEGMENT_ALLOCATED, Type.ACQUIRE, Type.SEGMENT_ALLOCATED,
					Type.CLOSE, Type.CLOSE, Type.SEGMENT_RELEASED, Type.TRIM, Type.OUT_OF_MEMORY);
		MemoryEvent acquired = only(events, Type.ACQUIRE, 3000);
		assertThat(acquired.blockBytes()).isEqualTo(pool.blockSize(3000));
		assertThat(acquired.thread()).isEqualTo(Thread.currentThread().getName());
		assertThat(acquired.frames().get(0))
			.startsWith(MemoryHistoryTest.class.getName() + ".recordsAcquiresClosesSegmentsTrimsAndFailuresInOrder(");
		MemoryEvent closed = only(events, Type.CLOSE, 3000);
		assertThat(closed.buffer()).as("the same buffer").isEqualTo(acquired.buffer());
		assertThat(closed.stream()).as("closed after the stream's work").isEqualTo(stream.toString());
		assertThat(only(events, Type.CLOSE, 3 * MIB).stream()).isNull();
		assertThat(only(events, Type.TRIM, released).reservedBytes()).isZero();
		assertThat(only(events, Type.OUT_OF_MEMORY, 100 * MIB).thread()).isEqualTo(Thread.currentThread().getName());
		long reserved = 0;
		for (MemoryEvent event : events) {
			reserved += switch (event.type()) {
				case SEGMENT_ALLOCATED -> event.bytes();
				case SEGMENT_RELEASED -> -event.bytes();
				default -> 0;
			};
			if (event.type() != Type.ACQUIRE) {
				assertThat(event.reservedBytes()).as("the segments' count after %s", event).isEqualTo(reserved);
			}
		}
	}

	@Test
	void keepsTheLastEventsOnly() {
		StratifiedMemoryPool pool = pool(BufferRecording.ALL, 8);
		for (int i = 0; i < 20; i++) {
			pool.acquire(4096).close();
		}
		PoolHistory history = pool.history().orElseThrow();
		assertThat(history.complete()).isFalse();
		assertThat(history.events()).as("the last 8 of a segment, then 20 acquires and closes").hasSize(8);
		long last = history.events().get(7).sequence();
		assertThat(history.events()).extracting(MemoryEvent::sequence)
			.containsExactly(last - 7, last - 6, last - 5, last - 4, last - 3, last - 2, last - 1, last);
		assertThat(history.events()).extracting(MemoryEvent::type).containsOnly(Type.ACQUIRE, Type.CLOSE);
	}

	@Test
	void mergesTheStripesRingsByTimeFromTheNewestEventEachStillHolds() throws Exception {
		StratifiedMemoryPool pool = new StratifiedMemoryPool(this.allocator, PoolConfig.builder("striped")
			.stripes(4)
			.history(new HistoryConfig(BufferRecording.ALL, 8))
			.build());
		this.pools.add(pool);
		onNewThread(() -> pool.acquire(4096).close());
		onNewThread(() -> {
			for (int i = 0; i < 2; i++) {
				pool.acquire(8192).close();
			}
		});
		PoolHistory history = pool.history().orElseThrow();
		assertThat(history.complete()).isTrue();
		assertThat(history.events()).extracting(MemoryEvent::sequence).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L);
		assertThat(history.events()).extracting(MemoryEvent::bytes)
			.as("one thread's acquire, the segment made for it, its close, then the other's buffers")
			.containsExactly(4096L, 2 * MIB, 4096L, 8192L, 8192L, 8192L, 8192L);
		onNewThread(() -> {
			for (int i = 0; i < 10; i++) {
				pool.acquire(16384).close();
			}
		});
		history = pool.history().orElseThrow();
		assertThat(history.complete()).isFalse();
		assertThat(history.events()).as("the lapped ring's last 8, none older from the other rings")
			.extracting(MemoryEvent::bytes)
			.containsOnly(16384L)
			.hasSize(8);
		assertThat(history.events()).extracting(MemoryEvent::sequence)
			.containsExactly(19L, 20L, 21L, 22L, 23L, 24L, 25L, 26L);
	}

	@Test
	void byDefaultRecordsBuffersOfAMebibyteOrMoreOnly() {
		StratifiedMemoryPool pool = pool(BufferRecording.LARGE, 100);
		pool.acquire(512 << 10).close();
		pool.acquire(MIB).close();
		assertThat(pool.history().orElseThrow().events()).filteredOn((event) -> event.buffer() != 0)
			.extracting(MemoryEvent::type, MemoryEvent::bytes)
			.containsExactly(tuple(Type.ACQUIRE, MIB),
					tuple(Type.CLOSE, MIB));
	}

	@Test
	void keepsNoEventsWhenToldToKeepNone() {
		StratifiedMemoryPool pool = pool(BufferRecording.ALL, 0);
		pool.acquire(MIB).close();
		pool.trim(0);
		assertThat(pool.history().orElseThrow().events()).isEmpty();
	}

	@Test
	void recordsEveryBufferOfManyThreadsOnce() throws Exception {
		StratifiedMemoryPool pool = pool(BufferRecording.ALL, 1 << 16);
		ExecutorService threads = Executors.newFixedThreadPool(4);
		try {
			List<Future<?>> work = new ArrayList<>();
			for (int t = 0; t < 4; t++) {
				int seed = t;
				work.add(threads.submit(() -> {
					SplittableRandom random = new SplittableRandom(seed);
					for (int i = 0; i < 2000; i++) {
						pool.acquire(random.nextLong(1, 4 * MIB)).close();
					}
				}));
			}
			for (Future<?> each : work) {
				each.get();
			}
		}
		finally {
			threads.shutdownNow();
		}
		List<MemoryEvent> events = pool.history().orElseThrow().events();
		assertThat(events).extracting(MemoryEvent::sequence).isSorted().doesNotHaveDuplicates();
		assertThat(pool.history().orElseThrow().complete()).as("none dropped").isTrue();
		Map<Long, Integer> opened = new HashMap<>();
		for (MemoryEvent event : events) {
			if (event.type() == Type.ACQUIRE) {
				assertThat(opened.put(event.buffer(), 1)).as("a buffer acquired once").isNull();
			}
			else if (event.type() == Type.CLOSE) {
				assertThat(opened.remove(event.buffer())).as("closed after its acquire").isEqualTo(1);
			}
		}
		assertThat(opened).as("every buffer closed").isEmpty();
		assertThat(events).filteredOn((event) -> event.type() == Type.ACQUIRE).hasSize(8000);
		assertThat(events.stream()
			.mapToLong((event) -> switch (event.type()) {
				case SEGMENT_ALLOCATED -> event.bytes();
				case SEGMENT_RELEASED -> -event.bytes();
				default -> 0;
			})
			.sum()).as("the segments' events count the reserved bytes").isEqualTo(this.allocator.statistics().currentBytes());
	}

	/** Runs {@code work} on a thread of its own, which has a stripe of its own. */
	private static void onNewThread(Runnable work) throws InterruptedException {
		Thread thread = new Thread(work);
		thread.start();
		thread.join();
	}

	private static MemoryEvent only(List<MemoryEvent> events, Type type, long bytes) {
		return events.stream()
			.filter((event) -> event.type() == type && event.bytes() == bytes)
			.reduce((a, b) -> {
				throw new AssertionError("two " + type + " events of " + bytes + " bytes: " + a + ", " + b);
			})
			.orElseThrow(() -> new AssertionError("no " + type + " event of " + bytes + " bytes in " + events));
	}

	private StratifiedMemoryPool pool(BufferRecording buffers, int events) {
		StratifiedMemoryPool pool = new StratifiedMemoryPool(this.allocator,
				PoolConfig.builder("recorded").history(new HistoryConfig(buffers, events)).build());
		this.pools.add(pool);
		return pool;
	}

}
