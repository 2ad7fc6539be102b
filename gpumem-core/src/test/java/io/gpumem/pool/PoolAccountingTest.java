package io.gpumem.pool;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import io.gpumem.allocator.StatisticsAllocator;
import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryKind;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A pool's statistics add up: its size-class rows and the figures above the top class come to its in-use bytes
 * exactly, and with the segments' free bytes to its cached bytes; in-use bytes are the blocks its lent buffers
 * hold, and reserved bytes what the allocator has handed out. Checked for a mix of sizes across every tier
 * (the free lists, classes cut to size from the arena, blocks above the top class, a shelf), after warming,
 * lending, closing, setting aside, trimming and many threads.
 */
class PoolAccountingTest {

	private static final long KIB = 1024;

	private static final long MIB = 1024 * KIB;

	/** A request of each tier: front classes, a class above the front's limit, above the top class. */
	private static final long[] SIZES = { 200, 3000, 4 * KIB, 70 * KIB, 200 * KIB, 300 * KIB, 700 * KIB, 3 * MIB };

	private GpuBackend backend;

	private StatisticsAllocator allocator;

	private StratifiedMemoryPool pool;

	static Stream<Named<Supplier<GpuBackend>>> backends() {
		return Stream.of(Named.of("host", () -> new HostBackend(256L << 20)),
				Named.of("cuda on the fake driver", () -> CudaBackend.open(new FakeCudaDriver(256L << 20), 0)));
	}

	private void open(Supplier<GpuBackend> backend) {
		this.backend = backend.get();
		this.allocator = new StatisticsAllocator(this.backend.allocator(MemoryKind.DEVICE));
		this.pool = new StratifiedMemoryPool(this.allocator, PoolConfig.builder("device")
			.sizeClasses(SizeClassLadder.geometric(256, MIB, 4, 128))
			.warm(4096, 3)
			.warm(MIB, 1)
			.build());
	}

	@AfterEach
	void close() {
		this.pool.close();
		assertThat(this.allocator.statistics().currentBytes()).as("everything given back").isZero();
		this.backend.close();
	}

	@ParameterizedTest
	@MethodSource("backends")
	void rowsAndTheFiguresAboveTheTopClassAddUpToThePoolsInUseAndCachedBytes(Supplier<GpuBackend> backend) {
		open(backend);
		assertAddsUp(List.of());
		List<PooledBuffer> lent = new ArrayList<>();
		for (int round = 0; round < 3; round++) {
			for (long size : SIZES) {
				lent.add(this.pool.acquire(size));
			}
		}
		assertAddsUp(lent);
		for (int i = 0; i < lent.size(); i += 2) {
			lent.get(i).close();
		}
		lent.removeIf(PooledBuffer::isClosed);
		assertAddsUp(lent);
		BufferShelf shelf = this.pool.shelf(2);
		assertThat(shelf.put("small", lent.remove(0))).isTrue();
		assertThat(shelf.put("large", lent.remove(lent.size() - 1))).isTrue();
		assertAddsUp(lent);
		lent.add(shelf.take("small"));
		assertAddsUp(lent);
		this.pool.trim(this.pool.cachedBytes() / 2);
		assertThat(shelf.count("large")).as("a trim lets go of the shelves first").isZero();
		assertAddsUp(lent);
		lent.forEach(PooledBuffer::close);
		lent.clear();
		assertAddsUp(lent);
		this.pool.trim(0);
		assertAddsUp(lent);
		assertThat(this.pool.statistics().reservedBytes()).isZero();
	}

	@ParameterizedTest
	@MethodSource("backends")
	void theyStillAddUpOnceManyThreadsHaveLentAndClosedEverySize(Supplier<GpuBackend> backend) throws Exception {
		open(backend);
		ExecutorService threads = Executors.newFixedThreadPool(6);
		List<Future<?>> workers = new ArrayList<>();
		BufferShelf shelf = this.pool.shelf(3);
		for (int t = 0; t < 6; t++) {
			long seed = t;
			workers.add(threads.submit(() -> {
				SplittableRandom random = new SplittableRandom(seed);
				List<PooledBuffer> held = new ArrayList<>();
				for (int i = 0; i < 3000; i++) {
					if (held.size() > 4 || (!held.isEmpty() && random.nextBoolean())) {
						PooledBuffer buffer = held.remove(random.nextInt(held.size()));
						if (random.nextInt(4) == 0) {
							shelf.put(buffer.size(), buffer);
						}
						else {
							buffer.close();
						}
					}
					else {
						long size = SIZES[random.nextInt(SIZES.length)];
						PooledBuffer kept = shelf.take(size);
						held.add((kept != null) ? kept : this.pool.acquire(size));
					}
					if (i % 500 == 0) {
						this.pool.trim(random.nextLong(8 * MIB));
					}
				}
				held.forEach(PooledBuffer::close);
				return null;
			}));
		}
		for (Future<?> worker : workers) {
			worker.get(2, TimeUnit.MINUTES);
		}
		threads.shutdown();
		assertAddsUp(List.of());
		PoolStatistics statistics = this.pool.statistics();
		assertThat(statistics.returns()).isEqualTo(statistics.requests());
	}

	/**
	 * The rows and the figures above the top class add up to the pool's in-use bytes and, with the free bytes of
	 * the segments, to its cached bytes; those are the blocks of {@code lent} and what the allocator handed out
	 * beyond them, and the single figures agree.
	 */
	private void assertAddsUp(List<PooledBuffer> lent) {
		PoolStatistics statistics = this.pool.statistics();
		long rowsInUse = statistics.aboveTopClass().inUseBytes();
		long rowsCached = statistics.aboveTopClass().cachedBytes();
		long rowsInUseBuffers = statistics.aboveTopClass().inUseBuffers();
		for (SizeClassStatistics row : statistics.sizeClasses()) {
			rowsInUse += row.inUseBytes();
			rowsCached += row.cachedBytes();
			rowsInUseBuffers += row.inUseBuffers();
		}
		assertThat(rowsInUse).as("in use by the rows").isEqualTo(statistics.inUseBytes());
		assertThat(rowsCached + statistics.segments().freeBytes()).as("cached by the rows and the segments")
			.isEqualTo(statistics.cachedBytes());
		assertThat(rowsInUseBuffers).isEqualTo(statistics.inUseBuffers()).isEqualTo(lent.size());
		assertThat(statistics.inUseBytes()).as("the blocks lent")
			.isEqualTo(lent.stream().mapToLong(PooledBuffer::capacity).sum());
		assertThat(statistics.reservedBytes()).as("what the allocator handed out")
			.isEqualTo(this.allocator.statistics().currentBytes())
			.isEqualTo(statistics.inUseBytes() + statistics.cachedBytes())
			.isEqualTo(this.pool.reservedBytes());
		assertThat(statistics.cachedBytes()).isEqualTo(this.pool.cachedBytes());
		assertThat(statistics.inUseBytes()).isEqualTo(this.pool.usedBytes());
	}

}
