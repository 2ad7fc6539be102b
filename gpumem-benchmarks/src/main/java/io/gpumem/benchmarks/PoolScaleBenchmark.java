package io.gpumem.benchmarks;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
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
import io.gpumem.pool.StratifiedMemoryPool;

/**
 * The hit path with 10², 10⁴ and 10⁶ buffers cached in the class it hits (256 B). The warm-up is long:
 * after a million buffers are allocated the collector takes a few seconds to settle, and the first
 * iterations scatter.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 10, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = "-Xmx4g")
@State(Scope.Benchmark)
public class PoolScaleBenchmark {

	private static final int SIZE = 256;

	@Param({ "100", "10000", "1000000" })
	public int cached;

	private StratifiedMemoryPool pool;

	@Setup(Level.Trial)
	public void setUp() {
		this.pool = new StratifiedMemoryPool(new HostBackend(4L << 30).allocator(MemoryKind.DEVICE),
				PoolConfig.builder("scale").maxCachedBytes(1L << 30).warm(SIZE, this.cached).build());
	}

	@TearDown(Level.Trial)
	public void tearDown() {
		this.pool.close();
	}

	@Benchmark
	public long hit() {
		return PoolHit.acquireAndRelease(this.pool, SIZE);
	}

}
