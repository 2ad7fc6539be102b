package io.gpumem.sample.kernels;

import java.util.Arrays;
import java.util.SplittableRandom;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaBackend;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.reduction.ReductionBuffer;
import io.gpumem.reduction.ReductionBufferCache;
import io.gpumem.reduction.ReductionOp;
import io.gpumem.stream.GpuStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The kernels' float32 sums on inputs large enough for a running sum to drift, against double
 * precision: the host kernels, and the CUDA path (module, launches, the PTX kernels' block structure)
 * over the fake driver. The tolerances are those docs/sample-service.md states.
 */
class KernelsNumericsTest {

	private static final long CAPACITY = 256L << 20;

	/** The backends, with the relative error their SUMs keep to. */
	enum Path {

		HOST(1e-6), CUDA_ON_FAKE_DRIVER(1e-4);

		final double relativeError;

		Path(double relativeError) {
			this.relativeError = relativeError;
		}

	}

	private GpuBackend backend;

	private Kernels kernels;

	private StratifiedMemoryPool device;

	private StratifiedMemoryPool pinned;

	private ReductionBufferCache reductions;

	private GpuStream stream;

	private void open(Path path) {
		if (path == Path.HOST) {
			this.backend = new HostBackend(CAPACITY);
			this.kernels = new HostKernels();
		}
		else {
			CudaBackend cuda = CudaBackend.open(FakeCudaKernels.driver(CAPACITY), 0);
			this.backend = cuda;
			this.kernels = new CudaKernels(cuda);
		}
		this.device = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE),
				PoolConfig.builder("device").build());
		this.pinned = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.PINNED),
				PoolConfig.builder("pinned").build());
		this.reductions = new ReductionBufferCache("reduction", this.device, this.pinned, 1);
		this.stream = this.backend.createStream();
	}

	@AfterEach
	void close() {
		this.stream.close();
		this.reductions.close();
		this.device.close();
		this.pinned.close();
		this.backend.close();
	}

	@ParameterizedTest
	@EnumSource(Path.class)
	void tenMillionTimesATenthSumToAMillion(Path path) {
		open(path);
		float[] values = new float[10_000_000];
		Arrays.fill(values, 0.1f);
		assertThat(sum(values)).as("a running float32 sum gives 1 087 937")
			.isCloseTo(1_000_000.0, within(path.relativeError * 1_000_000));
	}

	@ParameterizedTest
	@EnumSource(Path.class)
	void randomSumsAgreeWithDoublePrecisionAndMinMaxAreExact(Path path) {
		open(path);
		SplittableRandom random = new SplittableRandom(5);
		float[] values = new float[3_000_001];
		double exact = 0;
		double magnitude = 0;
		float min = Float.POSITIVE_INFINITY;
		float max = Float.NEGATIVE_INFINITY;
		for (int i = 0; i < values.length; i++) {
			values[i] = (float) random.nextDouble(-100, 100);
			exact += values[i];
			magnitude += Math.abs(values[i]);
			min = Math.min(min, values[i]);
			max = Math.max(max, values[i]);
		}
		assertThat(sum(values)).isCloseTo(exact, within(path.relativeError * magnitude));
		assertThat(reduce(ReductionOp.MIN, values)).isEqualTo(min);
		assertThat(reduce(ReductionOp.MAX, values)).isEqualTo(max);
	}

	@ParameterizedTest
	@EnumSource(Path.class)
	void theDanglingRanksOfMillionsOfNodesSumToOne(Path path) {
		open(path);
		int n = 4_000_000;
		float[] ranks = new float[n];
		Arrays.fill(ranks, 1f / n);
		try (PooledBuffer rank = upload(ranks); PooledBuffer outDegree = this.device.acquire(4L * n);
				ReductionBuffer dangling = this.reductions.acquire(float.class, 1, ReductionOp.SUM, this.stream)) {
			outDegree.fillInts(0, n, 0);
			this.kernels.pageRankDangling(this.stream, rank, outDegree, n, dangling);
			assertThat(dangling.readResult(0, this.stream).doubleValue()).isCloseTo(1.0, within(10 * path.relativeError));
		}
	}

	private double sum(float[] values) {
		return reduce(ReductionOp.SUM, values);
	}

	private float reduce(ReductionOp op, float[] values) {
		try (PooledBuffer input = upload(values);
				ReductionBuffer result = this.reductions.acquire(float.class, 1, op, this.stream)) {
			this.kernels.reduce(this.stream, op, input, values.length, result);
			return result.readResult(0, this.stream).floatValue();
		}
	}

	private PooledBuffer upload(float[] values) {
		PooledBuffer buffer = this.device.acquire(4L * values.length);
		buffer.copyFrom(values);
		return buffer;
	}

}
