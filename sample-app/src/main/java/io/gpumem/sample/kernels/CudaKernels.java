package io.gpumem.sample.kernels;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;

import jcuda.NativePointerObject;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.CudaException;
import io.gpumem.reduction.ReductionBuffer;
import io.gpumem.reduction.ReductionOp;
import io.gpumem.stream.GpuStream;

/**
 * The kernels of {@code kernels/sample_kernels.ptx}, loaded with {@code cuModuleLoadData} and launched on
 * the caller's stream.
 */
public final class CudaKernels implements Kernels {

	private static final int BLOCK = 256;

	private static final int MAX_BLOCKS = 4096;

	private final CudaBackend backend;

	private final CUfunction add;

	private final CUfunction saxpy;

	private final CUfunction reduce;

	private final CUfunction dangling;

	private final CUfunction contribution;

	private final CUfunction pull;

	public CudaKernels(CudaBackend backend) {
		this.backend = backend;
		backend.makeContextCurrent();
		CUmodule module = new CUmodule();
		check(JCudaDriver.cuModuleLoadData(module, ptx("kernels/sample_kernels.ptx")), "cuModuleLoadData");
		this.add = function(module, "vector_add");
		this.saxpy = function(module, "saxpy");
		this.reduce = function(module, "reduce");
		this.dangling = function(module, "pagerank_dangling");
		this.contribution = function(module, "pagerank_contribution");
		this.pull = function(module, "pagerank_pull");
	}

	@Override
	public void add(GpuStream stream, GpuBuffer a, GpuBuffer b, GpuBuffer out, int n) {
		launch(this.add, stream, n, device(a), device(b), device(out), Pointer.to(new int[] { n }));
	}

	@Override
	public void saxpy(GpuStream stream, float alpha, GpuBuffer x, GpuBuffer y, GpuBuffer out, int n) {
		launch(this.saxpy, stream, n, Pointer.to(new float[] { alpha }), device(x), device(y), device(out),
				Pointer.to(new int[] { n }));
	}

	@Override
	public void reduce(GpuStream stream, ReductionOp op, GpuBuffer values, int n, ReductionBuffer result) {
		float identity = Float.intBitsToFloat((int) op.identityBits(result.key().type()));
		launch(this.reduce, stream, n, Pointer.to(new int[] { Kernels.opCode(op) }), device(values),
				Pointer.to(new int[] { n }), Pointer.to(new float[] { identity }), device(result));
	}

	@Override
	public void pageRankDangling(GpuStream stream, GpuBuffer rank, GpuBuffer outDegree, int n,
			ReductionBuffer dangling) {
		launch(this.dangling, stream, n, device(rank), device(outDegree), Pointer.to(new int[] { n }),
				device(dangling));
	}

	@Override
	public void pageRankContribution(GpuStream stream, GpuBuffer rank, GpuBuffer outDegree, GpuBuffer contribution,
			int n) {
		launch(this.contribution, stream, n, device(rank), device(outDegree), device(contribution),
				Pointer.to(new int[] { n }));
	}

	@Override
	public void pageRankPull(GpuStream stream, GpuBuffer rowStart, GpuBuffer sources, GpuBuffer contribution,
			ReductionBuffer dangling, GpuBuffer next, int n, float damping) {
		launch(this.pull, stream, n, device(rowStart), device(sources), device(contribution), device(dangling),
				device(next), Pointer.to(new int[] { n }), Pointer.to(new float[] { damping }));
	}

	private void launch(CUfunction function, GpuStream stream, int n, NativePointerObject... arguments) {
		int blocks = Math.max(1, Math.min(MAX_BLOCKS, (n + BLOCK - 1) / BLOCK));
		this.backend.makeContextCurrent();
		check(JCudaDriver.cuLaunchKernel(function, blocks, 1, 1, BLOCK, 1, 1, 0, stream.unwrap(CUstream.class),
				Pointer.to(arguments), null), "cuLaunchKernel");
	}

	private static Pointer device(GpuBuffer buffer) {
		return Pointer.to(buffer.unwrap(CUdeviceptr.class));
	}

	private static CUfunction function(CUmodule module, String name) {
		CUfunction function = new CUfunction();
		check(JCudaDriver.cuModuleGetFunction(function, module, name), "cuModuleGetFunction(" + name + ")");
		return function;
	}

	private static byte[] ptx(String resource) {
		try (InputStream in = CudaKernels.class.getClassLoader().getResourceAsStream(resource)) {
			if (in == null) {
				throw new IllegalStateException("PTX resource " + resource + " is missing from the class path");
			}
			byte[] ptx = in.readAllBytes();
			return Arrays.copyOf(ptx, ptx.length + 1);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static void check(int result, String call) {
		if (result != CUresult.CUDA_SUCCESS) {
			throw new CudaException(call, result, CUresult.stringFor(result));
		}
	}

}
