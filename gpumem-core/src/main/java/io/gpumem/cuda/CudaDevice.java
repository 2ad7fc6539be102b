package io.gpumem.cuda;

import java.util.function.Consumer;

import io.gpumem.memory.DeviceHealth;

/**
 * One device's retained primary context: every public CUDA operation starts with {@link #bind()}, which
 * makes the context current on the calling OS thread (request threads and virtual threads move between
 * OS threads, and a context is current per OS thread) and hands out the driver guarded for the context
 * ({@link ContextGuard}): an error that leaves the context unusable marks the device's {@link #health()} failed.
 */
final class CudaDevice {

	private final CudaDriver driver;

	private final CudaDriver guarded;

	private final DeviceHealth health;

	private final int ordinal;

	private final String name;

	private final Object context;

	private volatile boolean released;

	CudaDevice(CudaDriver driver, int ordinal, String name) {
		this.driver = driver;
		this.ordinal = ordinal;
		this.name = name;
		this.health = new DeviceHealth(ordinal, name);
		this.guarded = ContextGuard.guard(driver, this.health);
		this.context = driver.retainPrimaryContext(ordinal);
	}

	/** Makes the context current on this thread and returns the guarded driver to call. */
	CudaDriver bind() {
		if (this.released) {
			throw new IllegalStateException("the CUDA backend of device " + this.ordinal + " is closed");
		}
		this.guarded.setCurrentContext(this.context);
		return this.guarded;
	}

	/**
	 * Gives memory of this context back through {@code free}, bound as {@link #bind()} binds; once the backend is
	 * closed it does nothing, since releasing the context freed all the context's memory with it, so that a buffer
	 * closed after its pool and backend (a request ending during shutdown) closes quietly.
	 */
	void free(Consumer<CudaDriver> free) {
		if (!this.released) {
			free.accept(bind());
		}
	}

	DeviceHealth health() {
		return this.health;
	}

	/**
	 * What a wait a user makes does after the driver answered: on a failed device, which answers waits at once,
	 * it refuses to report the work done.
	 * @throws io.gpumem.memory.GpuDeviceFailedException if the device has failed
	 */
	void checkWorking() {
		this.health.check();
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
			this.guarded.releasePrimaryContext(this.ordinal);
		}
	}

}
