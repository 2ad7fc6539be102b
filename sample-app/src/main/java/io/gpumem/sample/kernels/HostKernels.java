package io.gpumem.sample.kernels;

import java.nio.ByteBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.stream.IntStream;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.reduction.ReductionBuffer;
import io.gpumem.reduction.ReductionOp;
import io.gpumem.stream.GpuStream;

/**
 * The kernels in Java, over the pooled buffers' memory, for the host backend (whose streams run work at
 * once). Element-wise work is split across cores from {@value #PARALLEL_FROM} elements on; sums are
 * float32, as on the device.
 */
public final class HostKernels implements Kernels {

	static final int PARALLEL_FROM = 1 << 15;

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
		float acc = slot.get(0);
		for (int i = 0; i < n; i++) {
			acc = (float) op.combine(acc, input.get(i));
		}
		slot.put(0, acc);
	}

	@Override
	public void pageRankDangling(GpuStream stream, GpuBuffer rank, GpuBuffer outDegree, int n,
			ReductionBuffer dangling) {
		FloatBuffer ranks = floats(rank);
		IntBuffer degrees = ints(outDegree);
		FloatBuffer slot = floats(dangling);
		float sum = slot.get(0);
		for (int u = 0; u < n; u++) {
			if (degrees.get(u) == 0) {
				sum += ranks.get(u);
			}
		}
		slot.put(0, sum);
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
