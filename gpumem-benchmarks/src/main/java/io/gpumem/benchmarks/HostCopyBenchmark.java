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
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;

/**
 * Copies a float array into and out of a host-backend buffer (a direct byte buffer) against
 * {@code System.arraycopy} between two heap arrays: the price of keeping emulated device memory
 * off-heap without {@code sun.misc.Unsafe}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class HostCopyBenchmark {

	@Param({ "1024", "262144" })
	public int floats;

	private StratifiedMemoryPool pool;

	private PooledBuffer buffer;

	private float[] source;

	private float[] middle;

	private float[] target;

	@Setup(Level.Trial)
	public void setUp() {
		this.pool = new StratifiedMemoryPool(new HostBackend(1L << 30).allocator(MemoryKind.DEVICE),
				PoolConfig.builder("copy").build());
		this.buffer = this.pool.acquire((long) this.floats * Float.BYTES);
		this.source = new float[this.floats];
		this.middle = new float[this.floats];
		this.target = new float[this.floats];
		for (int i = 0; i < this.floats; i++) {
			this.source[i] = i;
		}
	}

	@TearDown(Level.Trial)
	public void tearDown() {
		this.buffer.close();
		this.pool.close();
	}

	@Benchmark
	public float[] bufferRoundTrip() {
		this.buffer.copyFrom(this.source);
		this.buffer.copyTo(this.target);
		return this.target;
	}

	@Benchmark
	public float[] heapArraycopyRoundTrip() {
		System.arraycopy(this.source, 0, this.middle, 0, this.floats);
		System.arraycopy(this.middle, 0, this.target, 0, this.floats);
		return this.target;
	}

}
