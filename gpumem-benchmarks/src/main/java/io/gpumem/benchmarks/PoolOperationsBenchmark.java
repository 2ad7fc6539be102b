package io.gpumem.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PoolStatistics;
import io.gpumem.pool.SizeClassLadder;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.pressure.PressureHandler;
import io.gpumem.pressure.PressureLevel;

/**
 * What the pool's slow operations cost: a statistics snapshot (what an endpoint call takes) against the
 * number of size classes and the number of threads that have used the pool and are alive, one of the
 * single figures a meter reads, a trim per buffer released, and one pressure check over two registered
 * pools.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class PoolOperationsBenchmark {

	/**
	 * A pool whose ladder has {@code stepsPerDoubling} classes per power of two from 256 B to 64 MiB, one
	 * buffer cached in each, used by {@code threads} threads that stay alive, idle, while it is measured.
	 */
	@State(Scope.Benchmark)
	public static class Snapshot {

		@Param({ "1", "4", "16" })
		public int stepsPerDoubling;

		@Param({ "1", "200" })
		public int threads;

		StratifiedMemoryPool pool;

		private final CountDownLatch measured = new CountDownLatch(1);

		private final List<Thread> users = new ArrayList<>();

		@Setup(Level.Trial)
		public void setUp() throws InterruptedException {
			SizeClassLadder ladder = SizeClassLadder.geometric(256, 64L << 20, this.stepsPerDoubling, 128);
			PoolConfig.Builder config = PoolConfig.builder("snapshot").sizeClasses(ladder).maxCachedBytes(8L << 30);
			this.pool = new StratifiedMemoryPool(new HostBackend(8L << 30).allocator(MemoryKind.DEVICE), config.build());
			for (int c = 0; c < ladder.count() && ladder.size(c) <= (1 << 20); c++) {
				this.pool.warm(ladder.size(c), 1);
			}
			CountDownLatch used = new CountDownLatch(this.threads);
			for (int t = 0; t < this.threads; t++) {
				long size = ladder.size(t % ladder.count());
				Thread user = new Thread(() -> {
					PoolHit.acquireAndRelease(this.pool, Math.min(size, 1 << 20));
					used.countDown();
					try {
						this.measured.await();
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
				});
				this.users.add(user);
				user.start();
			}
			used.await();
		}

		@TearDown(Level.Trial)
		public void tearDown() throws InterruptedException {
			this.measured.countDown();
			for (Thread user : this.users) {
				user.join();
			}
			this.pool.close();
		}

	}

	/** A pool warmed with {@value #BUFFERS} buffers over 8 classes before every trim. */
	@State(Scope.Thread)
	public static class Trim {

		static final int BUFFERS = 10_000;

		StratifiedMemoryPool pool;

		@Setup(Level.Trial)
		public void setUp() {
			this.pool = new StratifiedMemoryPool(new HostBackend(4L << 30).allocator(MemoryKind.DEVICE),
					PoolConfig.builder("trim").maxCachedBytes(4L << 30).build());
		}

		@Setup(Level.Invocation)
		public void warm() {
			for (int c = 0; c < 8; c++) {
				this.pool.warm(this.pool.sizeClasses().size(c), BUFFERS / 8);
			}
		}

		@TearDown(Level.Trial)
		public void tearDown() {
			this.pool.close();
		}

	}

	/** A pressure handler over a device and a pinned pool with some memory reserved, reacting with SHRINK. */
	@State(Scope.Benchmark)
	public static class Pressure {

		HostBackend backend;

		StratifiedMemoryPool device;

		StratifiedMemoryPool pinned;

		PressureHandler handler;

		@Setup(Level.Trial)
		public void setUp() {
			this.backend = new HostBackend(1L << 30);
			this.device = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE),
					PoolConfig.builder("device").warm(65536, 100).build());
			this.pinned = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.PINNED),
					PoolConfig.builder("pinned").warm(4096, 100).build());
			this.handler = PressureHandler.builder(this.backend::memoryInfo).build();
			this.handler.register(this.device);
			this.handler.register(this.pinned);
		}

		@TearDown(Level.Trial)
		public void tearDown() {
			this.handler.close();
			this.device.close();
			this.pinned.close();
		}

	}

	@Benchmark
	public PoolStatistics statisticsSnapshot(Snapshot state) {
		return state.pool.statistics();
	}

	@Benchmark
	public long usedBytesFigure(Snapshot state) {
		return state.pool.usedBytes();
	}

	@Benchmark
	@OperationsPerInvocation(Trim.BUFFERS)
	public long trimPerReleasedBuffer(Trim state) {
		return state.pool.trim(0);
	}

	@Benchmark
	public PressureLevel pressureCheck(Pressure state) {
		return state.handler.check();
	}

}
