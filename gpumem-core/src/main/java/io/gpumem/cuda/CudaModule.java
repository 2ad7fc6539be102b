package io.gpumem.cuda;

import java.util.Objects;

/**
 * A module of kernels loaded on one device from a PTX or cubin image ({@link CudaBackend#loadModule}):
 * its kernels are had by entry point name and launched over pooled buffers on gpumem's streams.
 */
public final class CudaModule implements AutoCloseable {

	private final CudaDevice device;

	private final Object module;

	private volatile boolean unloaded;

	CudaModule(CudaDevice device, Object module) {
		this.device = device;
		this.module = module;
	}

	/**
	 * The kernel of entry point {@code name}.
	 * @throws CudaException with {@code CUDA_ERROR_NOT_FOUND} if the module has no such entry point
	 */
	public CudaKernel kernel(String name) {
		Objects.requireNonNull(name, "kernel name");
		return new CudaKernel(this, name, bind().function(this.module, name));
	}

	CudaDevice device() {
		return this.device;
	}

	CudaDriver bind() {
		if (this.unloaded) {
			throw new IllegalStateException("the CUDA module is unloaded");
		}
		return this.device.bind();
	}

	/** Unloads the module ({@code cuModuleUnload}); its kernels can no longer be launched. */
	@Override
	public synchronized void close() {
		if (!this.unloaded) {
			CudaDriver driver = bind();
			this.unloaded = true;
			driver.unloadModule(this.module);
		}
	}

}
