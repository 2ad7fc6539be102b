package io.gpumem.sample.kernels;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.CudaKernel;
import io.gpumem.cuda.CudaModule;
import io.gpumem.reduction.ReductionBuffer;
import io.gpumem.reduction.ReductionOp;
import io.gpumem.stream.GpuStream;

/**
 * The kernels of {@code kernels/sample_kernels.ptx}, loaded as a {@link CudaModule} and launched on the
 * caller's stream.
 */
public final class CudaKernels implements Kernels {

	private static final int BLOCK = 256;

	private static final int MAX_BLOCKS = 4096;

	private final CudaKernel add;

	private final CudaKernel saxpy;

	private final CudaKernel reduce;

	private final CudaKernel dangling;

	private final CudaKernel contribution;

	private final CudaKernel pull;

	public CudaKernels(CudaBackend backend) {
		CudaModule module = backend.loadModule(ptx("kernels/sample_kernels.ptx"));
		this.add = module.kernel("vector_add");
		this.saxpy = module.kernel("saxpy");
		this.reduce = module.kernel("reduce");
		this.dangling = module.kernel("pagerank_dangling");
		this.contribution = module.kernel("pagerank_contribution");
		this.pull = module.kernel("pagerank_pull");
	}

	@Override
	public void add(GpuStream stream, GpuBuffer a, GpuBuffer b, GpuBuffer out, int n) {
		launch(this.add, stream, n, a, b, out, n);
	}

	@Override
	public void saxpy(GpuStream stream, float alpha, GpuBuffer x, GpuBuffer y, GpuBuffer out, int n) {
		launch(this.saxpy, stream, n, alpha, x, y, out, n);
	}

	@Override
	public void reduce(GpuStream stream, ReductionOp op, GpuBuffer values, int n, ReductionBuffer result) {
		float identity = Float.intBitsToFloat((int) op.identityBits(result.key().type()));
		launch(this.reduce, stream, n, Kernels.opCode(op), values, n, identity, result);
	}

	@Override
	public void pageRankDangling(GpuStream stream, GpuBuffer rank, GpuBuffer outDegree, int n,
			ReductionBuffer dangling) {
		launch(this.dangling, stream, n, rank, outDegree, n, dangling);
	}

	@Override
	public void pageRankContribution(GpuStream stream, GpuBuffer rank, GpuBuffer outDegree, GpuBuffer contribution,
			int n) {
		launch(this.contribution, stream, n, rank, outDegree, contribution, n);
	}

	@Override
	public void pageRankPull(GpuStream stream, GpuBuffer rowStart, GpuBuffer sources, GpuBuffer contribution,
			ReductionBuffer dangling, GpuBuffer next, int n, float damping) {
		launch(this.pull, stream, n, rowStart, sources, contribution, dangling, next, n, damping);
	}

	private static void launch(CudaKernel kernel, GpuStream stream, int n, Object... arguments) {
		kernel.launch(stream, Math.max(1, Math.min(MAX_BLOCKS, (n + BLOCK - 1) / BLOCK)), BLOCK, arguments);
	}

	private static byte[] ptx(String resource) {
		try (InputStream in = CudaKernels.class.getClassLoader().getResourceAsStream(resource)) {
			if (in == null) {
				throw new IllegalStateException("PTX resource " + resource + " is missing from the class path");
			}
			return in.readAllBytes();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
