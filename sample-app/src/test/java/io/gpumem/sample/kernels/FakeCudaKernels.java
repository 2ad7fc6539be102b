package io.gpumem.sample.kernels;

import java.nio.FloatBuffer;
import java.nio.IntBuffer;

import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.cuda.FakeCudaDriver.FakeLaunch;

/**
 * The sample's PTX kernels in Java, bound by entry point name on a {@link FakeCudaDriver}, with the
 * arithmetic of {@code sample_kernels.cu}: grid-stride loops, a tree over each block's partial values, and
 * one atomic combine per block into the result. What only a GPU can tell (the PTX itself) stays for the
 * GPU verification.
 */
public final class FakeCudaKernels {

	private FakeCudaKernels() {
	}

	/** A fake driver of {@code capacity} bytes of device memory that runs the sample's kernels. */
	public static FakeCudaDriver driver(long capacity) {
		return new FakeCudaDriver(capacity).kernel("vector_add", FakeCudaKernels::vectorAdd)
			.kernel("saxpy", FakeCudaKernels::saxpy)
			.kernel("reduce", FakeCudaKernels::reduce)
			.kernel("pagerank_dangling", FakeCudaKernels::pageRankDangling)
			.kernel("pagerank_contribution", FakeCudaKernels::pageRankContribution)
			.kernel("pagerank_pull", FakeCudaKernels::pageRankPull);
	}

	private static void vectorAdd(FakeLaunch launch) {
		FloatBuffer a = floats(launch, 0);
		FloatBuffer b = floats(launch, 1);
		FloatBuffer out = floats(launch, 2);
		for (int i = 0, n = launch.intArgument(3); i < n; i++) {
			out.put(i, a.get(i) + b.get(i));
		}
	}

	private static void saxpy(FakeLaunch launch) {
		float alpha = launch.floatArgument(0);
		FloatBuffer x = floats(launch, 1);
		FloatBuffer y = floats(launch, 2);
		FloatBuffer out = floats(launch, 3);
		for (int i = 0, n = launch.intArgument(4); i < n; i++) {
			out.put(i, Math.fma(alpha, x.get(i), y.get(i)));
		}
	}

	private static void reduce(FakeLaunch launch) {
		int op = launch.intArgument(0);
		FloatBuffer values = floats(launch, 1);
		float identity = launch.floatArgument(3);
		FloatBuffer result = floats(launch, 4);
		blockReduce(launch, launch.intArgument(2), op, identity, values::get, result);
	}

	private static void pageRankDangling(FakeLaunch launch) {
		FloatBuffer rank = floats(launch, 0);
		IntBuffer outDegree = ints(launch, 1);
		blockReduce(launch, launch.intArgument(2), 0, 0f, (i) -> (outDegree.get(i) == 0) ? rank.get(i) : 0f,
				floats(launch, 3));
	}

	private static void pageRankContribution(FakeLaunch launch) {
		FloatBuffer rank = floats(launch, 0);
		IntBuffer outDegree = ints(launch, 1);
		FloatBuffer contribution = floats(launch, 2);
		for (int i = 0, n = launch.intArgument(3); i < n; i++) {
			contribution.put(i, (outDegree.get(i) == 0) ? 0f : rank.get(i) / outDegree.get(i));
		}
	}

	private static void pageRankPull(FakeLaunch launch) {
		IntBuffer rowStart = ints(launch, 0);
		IntBuffer sources = ints(launch, 1);
		FloatBuffer contribution = floats(launch, 2);
		float dangling = floats(launch, 3).get(0);
		FloatBuffer next = floats(launch, 4);
		int n = launch.intArgument(5);
		float damping = launch.floatArgument(6);
		float base = (1f - damping) / n;
		float sharedDangling = dangling / n;
		for (int v = 0; v < n; v++) {
			float sum = 0f;
			for (int k = rowStart.get(v); k < rowStart.get(v + 1); k++) {
				sum += contribution.get(sources.get(k));
			}
			next.put(v, Math.fma(damping, sum + sharedDangling, base));
		}
	}

	/**
	 * What each block of the reduction kernels does: every thread combines its grid-stride share, the
	 * block's partials are combined as a tree, and thread 0 combines the block's value into
	 * {@code result[0]} (an atomic on the device; here block after block, one order the device may take).
	 */
	private static void blockReduce(FakeLaunch launch, int n, int op, float identity, Value value,
			FloatBuffer result) {
		int threads = launch.threadsPerBlock();
		int stride = threads * launch.blocks();
		float[] partial = new float[threads];
		for (int block = 0; block < launch.blocks(); block++) {
			for (int t = 0; t < threads; t++) {
				float acc = identity;
				for (int i = block * threads + t; i < n; i += stride) {
					acc = combine(op, acc, value.at(i));
				}
				partial[t] = acc;
			}
			for (int half = threads / 2; half > 0; half >>= 1) {
				for (int t = 0; t < half; t++) {
					partial[t] = combine(op, partial[t], partial[t + half]);
				}
			}
			result.put(0, combine(op, result.get(0), partial[0]));
		}
	}

	/** The kernels' {@code combine}: 0 sum, 1 {@code fminf}, 2 {@code fmaxf} (a NaN loses to a number). */
	private static float combine(int op, float a, float b) {
		if (op == 0) {
			return a + b;
		}
		if (Float.isNaN(a) || Float.isNaN(b)) {
			return Float.isNaN(a) ? b : a;
		}
		return (op == 1) ? Math.min(a, b) : Math.max(a, b);
	}

	private static FloatBuffer floats(FakeLaunch launch, int argument) {
		return launch.memory(argument).asFloatBuffer();
	}

	private static IntBuffer ints(FakeLaunch launch, int argument) {
		return launch.memory(argument).asIntBuffer();
	}

	@FunctionalInterface
	private interface Value {

		float at(int index);

	}

}
