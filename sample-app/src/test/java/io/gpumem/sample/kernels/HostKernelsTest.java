package io.gpumem.sample.kernels;

import java.util.Arrays;
import java.util.SplittableRandom;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

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

/** The host kernels' sums on inputs large enough for a running float32 sum to drift. */
class HostKernelsTest {

	private final HostBackend backend = new HostBackend(256L << 20);

	private final StratifiedMemoryPool device = new StratifiedMemoryPool(
			this.backend.allocator(MemoryKind.DEVICE), PoolConfig.builder("device").build());

	private final StratifiedMemoryPool pinned = new StratifiedMemoryPool(
			this.backend.allocator(MemoryKind.PINNED), PoolConfig.builder("pinned").build());

	private final ReductionBufferCache reductions = new ReductionBufferCache("reduction",
			this.backend.allocator(MemoryKind.DEVICE), this.pinned, 1);

	private final GpuStream stream = this.backend.createStream();

	private final HostKernels kernels = new HostKernels();

	@AfterEach
	void close() {
		this.stream.close();
		this.reductions.close();
		this.device.close();
		this.pinned.close();
		this.backend.close();
	}

	@Test
	void tenMillionTimesATenthSumToAMillion() {
		int n = 10_000_000;
		float[] values = new float[n];
		Arrays.fill(values, 0.1f);
		assertThat(sum(values)).as("a running float32 sum gives 1 087 937").isCloseTo(1_000_000.0, within(1.0));
	}

	@Test
	void randomSumsAgreeWithDoublePrecisionAndMinMaxAreExact() {
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
		assertThat(sum(values)).isCloseTo(exact, within(1e-6 * magnitude));
		assertThat(reduce(ReductionOp.MIN, values)).isEqualTo(min);
		assertThat(reduce(ReductionOp.MAX, values)).isEqualTo(max);
	}

	@Test
	void theDanglingRanksOfMillionsOfNodesSumToOne() {
		int n = 4_000_000;
		float[] ranks = new float[n];
		Arrays.fill(ranks, 1f / n);
		try (PooledBuffer rank = upload(ranks); PooledBuffer outDegree = this.device.acquire(4L * n);
				ReductionBuffer dangling = this.reductions.acquire(float.class, 1, ReductionOp.SUM)) {
			outDegree.fillInts(0, n, 0);
			this.kernels.pageRankDangling(this.stream, rank, outDegree, n, dangling);
			assertThat(dangling.readResult(0).doubleValue()).isCloseTo(1.0, within(1e-5));
		}
	}

	private double sum(float[] values) {
		return reduce(ReductionOp.SUM, values);
	}

	private float reduce(ReductionOp op, float[] values) {
		try (PooledBuffer input = upload(values);
				ReductionBuffer result = this.reductions.acquire(float.class, 1, op)) {
			this.kernels.reduce(this.stream, op, input, values.length, result);
			return result.readResult(0).floatValue();
		}
	}

	private PooledBuffer upload(float[] values) {
		PooledBuffer buffer = this.device.acquire(4L * values.length);
		buffer.copyFrom(values);
		return buffer;
	}

}
