package io.gpumem.pool;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.advice.PoolAdvice;
import io.gpumem.pool.advice.PoolAdvisor;
import io.gpumem.pool.arena.Arena;
import io.gpumem.pool.diagnostics.BufferRecording;
import io.gpumem.pool.diagnostics.HistoryConfig;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.assertj.core.api.Assertions.within;

/** The advisor on records whose best answer is known, and its advice replayed on a pool. */
class PoolAdvisorTest {

	private static final List<Long> LADDER = List.of(256L, 1024L, 4096L, 16384L, 65536L, 262144L, 1048576L);

	@Test
	void aSizeBetweenTwoClassesGetsAClassOfItsOwn() {
		PoolAdvice advice = PoolAdvisor.advise(usage(Map.of(3000L, 1000L, 4096L, 1000L), LADDER, List.of()));
		assertThat(advice.ladder().added()).containsExactly(3072L);
		assertThat(advice.ladder().advised()).containsExactly(256L, 1024L, 3072L, 4096L, 16384L, 65536L, 262144L,
				1048576L);
		assertThat(advice.ladder().heldPerLent()).isCloseTo(8192.0 / 7096, within(1e-9));
		assertThat(advice.ladder().predictedHeldPerLent()).isCloseTo(7168.0 / 7096, within(1e-9));
	}

	@Test
	void sizesOnTheClassesOrCutToSizeNeedNoNewClass() {
		PoolAdvice advice = PoolAdvisor.advise(
				usage(Map.of(4096L, 500L, 65536L, 20L, 300_000L, 10L, 100L << 20, 1L), LADDER, List.of()));
		// 300 000 B is cut from the segments to 300 032 (256 B aligned); 100 MiB is above the top class
		assertThat(advice.ladder().added()).isEmpty();
		assertThat(advice.ladder().advised()).isEqualTo(LADDER);
		double lent = 500 * 4096 + 20 * 65536 + 10 * 300_000 + (100L << 20);
		double held = 500 * 4096 + 20 * 65536 + 10 * 300_032 + (100L << 20);
		assertThat(advice.ladder().heldPerLent()).isCloseTo(held / lent, within(1e-9));
		assertThat(advice.ladder().predictedHeldPerLent()).isEqualTo(advice.ladder().heldPerLent());
	}

	@Test
	void aSmallSavingAddsNoClass() {
		PoolAdvice advice = PoolAdvisor.advise(usage(Map.of(3000L, 1L, 65536L, 10_000L), LADDER, List.of()));
		assertThat(advice.ladder().added()).as("1 096 bytes saved of 655 M lent").isEmpty();
	}

	@Test
	void aWarmUpOfThePeakUseServesTheColdMissesOnly() {
		List<PoolUsage.ClassUse> uses = List.of(new PoolUsage.ClassUse(4096, 12, 10, 10),
				new PoolUsage.ClassUse(65536, 40, 30, 25), new PoolUsage.ClassUse(1024, 3, 0, 2));
		PoolAdvice advice = PoolAdvisor.advise(usage(Map.of(4096L, 100L), LADDER, uses));
		assertThat(advice.warm()).containsExactly(new PoolAdvice.Warm(65536, 25, 40, 30, 10),
				new PoolAdvice.Warm(4096, 10, 12, 10, 2));
	}

	@Test
	void aClassCountsItsPeakUseWhereverItsBlocksComeFrom() {
		PoolConfig config = PoolConfig.builder("device").sizeClasses(4096, 1L << 20).segmentSize(8L << 20).build();
		try (StratifiedMemoryPool pool = new StratifiedMemoryPool(new HostBackend(64L << 20).allocator(MemoryKind.DEVICE),
				config)) {
			List<PooledBuffer> held = new ArrayList<>();
			for (int i = 0; i < 2; i++) {
				held.add(pool.acquire(4096));
				held.add(pool.acquire(1L << 20));
			}
			assertThat(pool.statistics().misses()).as("one segment serves all four").isEqualTo(1);
			assertThat(PoolAdvisor.advise(pool).orElseThrow().warm()).as("the 1 MiB blocks, cut from that segment, hit")
				.containsExactly(new PoolAdvice.Warm(4096, 2, 1, 1, 0));
			for (int i = 0; i < 9; i++) {
				held.add(pool.acquire(1L << 20));
			}
			assertThat(pool.statistics().misses()).as("the eighth 1 MiB block needs a second segment").isEqualTo(2);
			assertThat(PoolAdvisor.advise(pool).orElseThrow().warm()).as("the three cut from the second segment count too")
				.contains(new PoolAdvice.Warm(1L << 20, 11, 1, 1, 0));
			held.forEach(PooledBuffer::close);
		}
	}

	@Test
	void theCapAdvisedIsThePeakReservedWhichKeepsTheHitRateWhenTheCapWasAbove() {
		PoolUsage usage = new PoolUsage("device", SizeHistogram.of(Map.of(4096L, 10L)), uses(LADDER), 100, 90,
				512L << 20, (40L << 20) + 1);
		assertThat(PoolAdvisor.advise(usage).maxCached())
			.isEqualTo(new PoolAdvice.MaxCached(512L << 20, 41L << 20, 0.9, true));
		PoolUsage capped = new PoolUsage("device", usage.requestSizes(), usage.classes(), 100, 90, 8L << 20,
				40L << 20);
		assertThat(PoolAdvisor.advise(capped).maxCached().keepsHitRate()).isFalse();
	}

	@Test
	void aPoolsAdviceReplayedOnANewPoolRemovesTheColdMissesAndTheRoundingItPredicts() {
		PoolConfig.Builder config = PoolConfig.builder("device")
			.sizeClasses(1024, 4096, 65536)
			.segmentSize(Arena.ALIGNMENT);
		PoolAdvice advice;
		try (StratifiedMemoryPool pool = new StratifiedMemoryPool(new HostBackend(64L << 20).allocator(MemoryKind.DEVICE),
				config.build())) {
			workload(pool);
			advice = PoolAdvisor.advise(pool).orElseThrow();
			assertThat(pool.statistics().requests()).isEqualTo(3 * 11);
		}
		assertThat(advice.ladder().added()).containsExactly(3072L, 60160L);
		assertThat(advice.ladder().heldPerLent()).isCloseTo((8 * 4096.0 + 3 * 65536) / (8 * 3000.0 + 3 * 60_000),
				within(1e-9));
		assertThat(advice.ladder().predictedHeldPerLent()).isCloseTo((8 * 3072.0 + 3 * 60160) / (8 * 3000.0 + 3 * 60_000),
				within(1e-9));
		assertThat(advice.warm()).extracting(PoolAdvice.Warm::classBytes, PoolAdvice.Warm::count,
				PoolAdvice.Warm::coldMisses, PoolAdvice.Warm::predictedMisses)
			.containsExactly(tuple(4096L, 8L, 8L, 0L), tuple(65536L, 3L, 3L, 0L));

		PoolConfig.Builder advised = PoolConfig.builder("device")
			.sizeClasses(advice.ladder().advised().stream().mapToLong(Long::longValue).toArray())
			.segmentSize(Arena.ALIGNMENT);
		advised.warm(3072, (int) advice.warm().get(0).count()).warm(60160, (int) advice.warm().get(1).count());
		try (StratifiedMemoryPool pool = new StratifiedMemoryPool(new HostBackend(64L << 20).allocator(MemoryKind.DEVICE),
				advised.build())) {
			long reservedBefore = pool.statistics().reservedBytes();
			workload(pool);
			PoolStatistics replayed = pool.statistics();
			assertThat(replayed.misses()).as("the warm-up served every miss").isZero();
			assertThat(replayed.reservedBytes()).isEqualTo(reservedBefore).isEqualTo(8 * 3072 + 3 * 60160);
		}
	}

	@Test
	void whereTheHistoryHoldsEveryBufferTheAdviceReplaysItWithTheAdvisedClasses() {
		PoolConfig.Builder config = PoolConfig.builder("device")
			.sizeClasses(1024, 4096, 65536)
			.segmentSize(Arena.ALIGNMENT);
		try (StratifiedMemoryPool pool = new StratifiedMemoryPool(new HostBackend(64L << 20).allocator(MemoryKind.DEVICE),
				config.history(new HistoryConfig(BufferRecording.ALL, 1000)).build())) {
			workload(pool);
			PoolAdvice.Replay replay = PoolAdvisor.advise(pool).orElseThrow().replay();
			assertThat(replay.acquires()).isEqualTo(3 * 11);
			assertThat(replay.peakReservedBytes()).as("the peak as it was").isEqualTo(pool.statistics().peakReservedBytes())
				.isEqualTo(8 * 4096 + 3 * 65536);
			assertThat(replay.advisedPeakReservedBytes()).as("with 3072 and 60160 B classes")
				.isEqualTo(8 * 3072 + 3 * 60160);
			assertThat(replay.advisedHeldPerLent()).isLessThan(replay.heldPerLent());
		}
		try (StratifiedMemoryPool pool = new StratifiedMemoryPool(new HostBackend(64L << 20).allocator(MemoryKind.DEVICE),
				config.history(new HistoryConfig(BufferRecording.ALL, 8)).build())) {
			workload(pool);
			assertThat(PoolAdvisor.advise(pool).orElseThrow().replay()).as("the history dropped events: no log to replay")
				.isNull();
		}
		try (StratifiedMemoryPool pool = new StratifiedMemoryPool(new HostBackend(64L << 20).allocator(MemoryKind.DEVICE),
				config.history(HistoryConfig.DEFAULT).build())) {
			workload(pool);
			assertThat(PoolAdvisor.advise(pool).orElseThrow().replay()).as("small buffers not recorded").isNull();
		}
	}

	/** Three rounds of 8 buffers of 3000 B and 3 of 60 000 B held at once: the advice's two classes, warmed, serve it all. */
	private static void workload(StratifiedMemoryPool pool) {
		for (int round = 0; round < 3; round++) {
			List<PooledBuffer> held = new ArrayList<>();
			for (int i = 0; i < 8; i++) {
				held.add(pool.acquire(3000));
			}
			for (int i = 0; i < 3; i++) {
				held.add(pool.acquire(60_000));
			}
			held.forEach(PooledBuffer::close);
		}
	}

	private static PoolUsage usage(Map<Long, Long> sizes, List<Long> ladder, List<PoolUsage.ClassUse> uses) {
		return new PoolUsage("device", SizeHistogram.of(sizes), uses.isEmpty() ? uses(ladder) : uses, 0, 0,
				Long.MAX_VALUE, 0);
	}

	private static List<PoolUsage.ClassUse> uses(List<Long> ladder) {
		return ladder.stream().map((size) -> new PoolUsage.ClassUse(size, 0, 0, 0)).toList();
	}

}
