package io.gpumem.sample.kernels;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveTask;
import java.util.stream.IntStream;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.memory.ElementType;
import io.gpumem.reduction.ReductionBuffer;
import io.gpumem.reduction.ReductionOp;
import io.gpumem.stream.GpuStream;

/**
 * The kernels in Java, over the pooled buffers' memory, for the host backend (whose streams run work at
 * once). Element-wise work is split across cores from {@value #PARALLEL_FROM} elements on. Reductions
 * and PageRank's dangling sum are float32, and combine as a tree, pairwise, as the device reduces within
 * a block: the error of a sum of n values grows with log n, not with n, so that summing 10 million
 * times 0.1 gives a million to within 1e-6, where a running float32 sum drifts by 9%.
 */
public final class HostKernels implements Kernels {

	static final int PARALLEL_FROM = 1 << 15;

	/** Runs this short are combined one by one; longer ones are halved. */
	private static final int LEAF = 8;

	@Override
	public void add(GpuStream stream, GpuBuffer a, GpuBuffer b, GpuBuffer out, int n) {
		FloatBuffer left = floats(a);
		FloatBuffer right = floats(b);
		FloatBuffer result = floats(out);
		range(n).forEach((i) -> result.put(i, left.get(i) + right.get(i)));
	}

	@Override
	public void saxpy(GpuStream stream, float alpha, GpuBuffer x, GpuBuffer y, GpuBuffer out, int n) {
		FloatBuffer xs = floats(x);
		FloatBuffer ys = floats(y);
		FloatBuffer result = floats(out);
		range(n).forEach((i) -> result.put(i, Math.fma(alpha, xs.get(i), ys.get(i))));
	}

	@Override
	public void reduce(GpuStream stream, ReductionOp op, GpuBuffer values, int n, ReductionBuffer result) {
		Kernels.opCode(op);
		FloatBuffer input = floats(values);
		FloatBuffer slot = floats(result);
		slot.put(0, (float) op.combine(slot.get(0), pairwise(op, n, input::get)));
	}

	@Override
	public void pageRankDangling(GpuStream stream, GpuBuffer rank, GpuBuffer outDegree, int n,
			ReductionBuffer dangling) {
		FloatBuffer ranks = floats(rank);
		IntBuffer degrees = ints(outDegree);
		FloatBuffer slot = floats(dangling);
		slot.put(0, slot.get(0) + pairwise(ReductionOp.SUM, n, (u) -> (degrees.get(u) == 0) ? ranks.get(u) : 0f));
	}

	@Override
	public void pageRankContribution(GpuStream stream, GpuBuffer rank, GpuBuffer outDegree, GpuBuffer contribution,
			int n) {
		FloatBuffer ranks = floats(rank);
		IntBuffer degrees = ints(outDegree);
		FloatBuffer result = floats(contribution);
		range(n).forEach((u) -> result.put(u, (degrees.get(u) == 0) ? 0f : ranks.get(u) / degrees.get(u)));
	}

	@Override
	public void pageRankPull(GpuStream stream, GpuBuffer rowStart, GpuBuffer sources, GpuBuffer contribution,
			ReductionBuffer dangling, GpuBuffer next, int n, float damping) {
		IntBuffer rows = ints(rowStart);
		IntBuffer from = ints(sources);
		FloatBuffer contributions = floats(contribution);
		FloatBuffer result = floats(next);
		float base = (1f - damping) / n;
		float sharedDangling = floats(dangling).get(0) / n;
		range(n).forEach((v) -> {
			float sum = 0f;
			for (int k = rows.get(v), end = rows.get(v + 1); k < end; k++) {
				sum += contributions.get(from.get(k));
			}
			result.put(v, Math.fma(damping, sum + sharedDangling, base));
		});
	}

	/**
	 * The values {@code 0 .. n-1} combined as a tree in float32: the halves of each range combined, the
	 * halves of a large range on separate cores.
	 */
	static float pairwise(ReductionOp op, int n, Values values) {
		if (n == 0) {
			return Float.intBitsToFloat((int) op.identityBits(ElementType.FLOAT));
		}
		Pairwise all = new Pairwise(op, values, 0, n);
		return (n >= PARALLEL_FROM) ? ForkJoinPool.commonPool().invoke(all) : all.compute();
	}

	/** A range of values combined as a tree: its halves forked where they are long enough to pay. */
	private static final class Pairwise extends RecursiveTask<Float> {

		private final ReductionOp op;

		private final Values values;

		private final int from;

		private final int to;

		Pairwise(ReductionOp op, Values values, int from, int to) {
			this.op = op;
			this.values = values;
			this.from = from;
			this.to = to;
		}

		@Override
		protected Float compute() {
			return combine(this.from, this.to);
		}

		private float combine(int start, int end) {
			if (end - start <= LEAF) {
				float acc = this.values.at(start);
				for (int i = start + 1; i < end; i++) {
					acc = (float) this.op.combine(acc, this.values.at(i));
				}
				return acc;
			}
			int mid = (start + end) >>> 1;
			if (end - start >= PARALLEL_FROM) {
				Pairwise left = new Pairwise(this.op, this.values, start, mid);
				left.fork();
				float right = combine(mid, end);
				return (float) this.op.combine(left.join(), right);
			}
			return (float) this.op.combine(combine(start, mid), combine(mid, end));
		}

	}

	/** The float32 values a reduction combines, by index. */
	@FunctionalInterface
	interface Values {

		float at(int index);

	}

	private static IntStream range(int n) {
		IntStream range = IntStream.range(0, n);
		return (n >= PARALLEL_FROM) ? range.parallel() : range;
	}

	private static FloatBuffer floats(GpuBuffer buffer) {
		return buffer.unwrap(ByteBuffer.class).asFloatBuffer();
	}

	private static IntBuffer ints(GpuBuffer buffer) {
		return buffer.unwrap(ByteBuffer.class).asIntBuffer();
	}

}
