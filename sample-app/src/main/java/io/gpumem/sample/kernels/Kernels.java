package io.gpumem.sample.kernels;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.reduction.ReductionBuffer;
import io.gpumem.reduction.ReductionOp;
import io.gpumem.stream.GpuStream;

/**
 * The sample's kernels, enqueued on a stream over pooled buffers of float32 (and int32 graph) data:
 * CUDA kernels from the shipped PTX on the cuda backend, Java on the host backend, with the same
 * arithmetic.
 */
public interface Kernels {

	/** {@code out[i] = a[i] + b[i]}. */
	void add(GpuStream stream, GpuBuffer a, GpuBuffer b, GpuBuffer out, int n);

	/** {@code out[i] = fma(alpha, x[i], y[i])}: alpha·x + y with one rounding. */
	void saxpy(GpuStream stream, float alpha, GpuBuffer x, GpuBuffer y, GpuBuffer out, int n);

	/** Combines the {@code n} values into slot 0 of {@code result}, which holds the op's identity: SUM, MIN or MAX. */
	void reduce(GpuStream stream, ReductionOp op, GpuBuffer values, int n, ReductionBuffer result);

	/** Adds the ranks of the nodes with no out-edges into slot 0 of {@code dangling}. */
	void pageRankDangling(GpuStream stream, GpuBuffer rank, GpuBuffer outDegree, int n, ReductionBuffer dangling);

	/** {@code contribution[u] = rank[u] / outDegree[u]}, 0 for a node with no out-edges. */
	void pageRankContribution(GpuStream stream, GpuBuffer rank, GpuBuffer outDegree, GpuBuffer contribution, int n);

	/**
	 * {@code next[v] = (1 - d) / n + d · (Σ contribution[u] over in-edges u → v + dangling / n)}, the in-edges
	 * of v being {@code sources[rowStart[v] .. rowStart[v + 1])}.
	 */
	void pageRankPull(GpuStream stream, GpuBuffer rowStart, GpuBuffer sources, GpuBuffer contribution,
			ReductionBuffer dangling, GpuBuffer next, int n, float damping);

	/** The op's code in the kernels: 0 sum, 1 min, 2 max. */
	static int opCode(ReductionOp op) {
		return switch (op) {
			case SUM -> 0;
			case MIN -> 1;
			case MAX -> 2;
			case PRODUCT -> throw new IllegalArgumentException("the sample's kernels reduce with SUM, MIN or MAX");
		};
	}

}
