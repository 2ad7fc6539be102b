package io.gpumem.cuda;

/**
 * One device's retained primary context: every public CUDA operation starts with {@link #bind()}, which
 * makes the context current on the calling OS thread (request threads and virtual threads move between
 * OS threads, and a context is current per OS thread).
 */
final class CudaDevice {

	private final CudaDriver driver;

	private final int ordinal;

	private final String name;

	private final Object context;

	private volatile boolean released;

	CudaDevice(CudaDriver driver, int ordinal, String name) {
		this.driver = driver;
		this.ordinal = ordinal;
		this.name = name;
		this.context = driver.retainPrimaryContext(ordinal);
	}

	/** Makes the context current on this thread and returns the driver to call. */
	CudaDriver bind() {
		if (this.released) {
			throw new IllegalStateException("the CUDA backend of device " + this.ordinal + " is closed");
		}
		this.driver.setCurrentContext(this.context);
		return this.driver;
	}

	CudaDriver driver() {
		return this.driver;
	}

	Object context() {
		return this.context;
	}

	int ordinal() {
		return this.ordinal;
	}

	String name() {
		return this.name;
	}

	synchronized void release() {
		if (!this.released) {
			this.released = true;
			this.driver.releasePrimaryContext(this.ordinal);
		}
	}

}
