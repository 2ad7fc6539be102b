package io.gpumem.cuda;

import java.lang.ref.Reference;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.memory.MemoryKind;
import io.gpumem.stream.GpuStream;

/**
 * One kernel of a {@link CudaModule}, launched on a one-dimensional grid on one of gpumem's streams,
 * after the work already enqueued there.
 * <pre>{@code
 * CudaKernel add = module.kernel("vector_add");
 * add.launch(stream, blocks, 256, a, b, out, n);
 * }</pre>
 */
public final class CudaKernel {

	private final CudaModule module;

	private final String name;

	private final Object function;

	CudaKernel(CudaModule module, String name, Object function) {
		this.module = module;
		this.name = name;
		this.function = function;
	}

	/** The kernel's entry point name. */
	public String name() {
		return this.name;
	}

	/**
	 * Enqueues the kernel on {@code stream}: {@code blocks} blocks of {@code threadsPerBlock} threads. Each
	 * argument is the kernel's parameter of that position: a {@link GpuBuffer} of DEVICE or UNIFIED memory
	 * (passed as its device pointer), or an {@code Integer}, {@code Long}, {@code Float} or {@code Double}.
	 * Buffers must stay open until the kernel has run (close them after the stream's work, as
	 * {@code closeAfter} does).
	 * @throws IllegalArgumentException for a stream or buffer of another device or backend, PINNED
	 * memory, an argument of another type, or a grid that is not positive
	 */
	public void launch(GpuStream stream, int blocks, int threadsPerBlock, Object... arguments) {
		if (blocks < 1 || threadsPerBlock < 1) {
			throw new IllegalArgumentException("a launch needs at least one block of at least one thread, not "
					+ blocks + " blocks of " + threadsPerBlock + " threads");
		}
		if (!(stream instanceof CudaStream cuda)) {
			throw new IllegalArgumentException("kernel " + this.name + " runs on a CUDA stream, not on " + stream);
		}
		CudaDevice device = this.module.device();
		Object[] parameters = new Object[arguments.length];
		for (int i = 0; i < arguments.length; i++) {
			parameters[i] = parameter(i, arguments[i], cuda);
		}
		try {
			this.module.bind().launchKernel(this.function, blocks, threadsPerBlock, 0, cuda.handle(device),
					parameters);
		}
		finally {
			Reference.reachabilityFence(arguments);
		}
	}

	private Object parameter(int position, Object argument, CudaStream stream) {
		if (argument instanceof GpuBuffer buffer) {
			CudaMemory memory = stream.memory(buffer);
			if (memory.kind() == MemoryKind.PINNED) {
				throw new IllegalArgumentException("argument " + position + " of kernel " + this.name
						+ " is PINNED host memory: kernels take DEVICE or UNIFIED buffers");
			}
			return memory.pointer();
		}
		if (argument instanceof Integer || argument instanceof Long || argument instanceof Float
				|| argument instanceof Double) {
			return argument;
		}
		throw new IllegalArgumentException("argument " + position + " of kernel " + this.name
				+ " must be a GpuBuffer, Integer, Long, Float or Double, not " + argument);
	}

	@Override
	public String toString() {
		return "CudaKernel[" + this.name + "]";
	}

}
