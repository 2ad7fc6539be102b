package io.gpumem.benchmarks;

import java.util.concurrent.TimeUnit;

import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;
import jcuda.driver.JCudaDriver;
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

import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.CudaProbe;
import io.gpumem.cuda.CudaProbeResult;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.pool.diagnostics.BufferRecording;
import io.gpumem.pool.diagnostics.HistoryConfig;

/**
 * On a CUDA device: a pool hit against {@code cuMemAlloc} + {@code cuMemFree} and against the
 * stream-ordered {@code cuMemAllocAsync} + {@code cuMemFreeAsync} on one stream (CUDA's own pool, which
 * is synchronized after each iteration), 1 KiB to 64 MiB. Without a usable device the setup fails
 * with the probe's reason; {@link GpuComparison} checks first and says so instead.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class GpuAllocationBenchmark {

	@Param({ "1024", "65536", "1048576", "16777216", "67108864" })
	public long size;

	/** What the pool's history records: the default, or {@code OFF} to see what recording costs a large hit. */
	@Param({ "LARGE" })
	public BufferRecording buffers;

	private CudaBackend backend;

	private StratifiedMemoryPool pool;

	private CUstream stream;

	@Setup(Level.Trial)
	public void setUp() {
		CudaProbeResult probe = CudaProbe.probe(0);
		if (!probe.usable()) {
			throw new IllegalStateException("no usable CUDA device: " + probe.reason());
		}
		this.backend = CudaBackend.open(0);
		this.pool = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE),
				PoolConfig.builder("gpu-bench")
					.maxCachedBytes(1L << 30)
					.history(new HistoryConfig(this.buffers, HistoryConfig.DEFAULT_EVENTS))
					.build());
		this.backend.makeContextCurrent();
		this.stream = new CUstream();
		JCudaDriver.cuStreamCreate(this.stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
	}

	@TearDown(Level.Iteration)
	public void synchronize() {
		this.backend.makeContextCurrent();
		JCudaDriver.cuStreamSynchronize(this.stream);
	}

	@TearDown(Level.Trial)
	public void tearDown() {
		this.backend.makeContextCurrent();
		JCudaDriver.cuStreamDestroy(this.stream);
		this.pool.close();
		this.backend.close();
	}

	@Benchmark
	public long gpumemPoolHit() {
		return PoolHit.acquireAndRelease(this.pool, this.size);
	}

	@Benchmark
	public CUdeviceptr cuMemAllocFree() {
		this.backend.makeContextCurrent();
		CUdeviceptr pointer = new CUdeviceptr();
		JCudaDriver.cuMemAlloc(pointer, this.size);
		JCudaDriver.cuMemFree(pointer);
		return pointer;
	}

	@Benchmark
	public CUdeviceptr cuMemAllocFreeAsync() {
		this.backend.makeContextCurrent();
		CUdeviceptr pointer = new CUdeviceptr();
		JCudaDriver.cuMemAllocAsync(pointer, this.size, this.stream);
		JCudaDriver.cuMemFreeAsync(pointer, this.stream);
		return pointer;
	}

}
