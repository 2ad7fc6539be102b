package io.gpumem.cuda;

import java.util.function.Consumer;

import io.gpumem.memory.DeviceHealth;

/**
 * One device's retained primary context: every public CUDA operation starts with {@link #bind()}, which
 * makes the context current on the calling OS thread (request threads and virtual threads move between
 * OS threads, and a context is current per OS thread) and hands out the driver guarded for the context
 * ({@link ContextGuard}): an error that leaves the context unusable marks the device's {@link #health()} failed.
 * Frees go through {@link #free}: the context stays retained while any allocation made in it lives, so that closing
 * the backend releases it with the last.
 */
final class CudaDevice {

	private final CudaDriver driver;

	private final CudaDriver guarded;

	private final DeviceHealth health;

	private final int ordinal;

	private final String name;

	private final Object context;

	private volatile boolean released;

	/** Allocations of the context not freed yet, each of which keeps it retained. */
	private long held;

	private volatile boolean contextReleased;

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

	/** Counts an allocation made in the context, which keeps the context retained until {@link #free} frees it. */
	synchronized void allocated() {
		this.held++;
	}

	/**
	 * Frees an allocation of the context through {@code free}, with the context current, after the backend closed
	 * too: a buffer closed after its pool and backend (a request ending during shutdown) gives its memory back
	 * instead of failing. The last allocation freed after the backend closed releases the context.
	 */
	void free(Consumer<CudaDriver> free) {
		try {
			free.accept(bindRetained());
		}
		finally {
			synchronized (this) {
				if (--this.held == 0 && this.released) {
					releaseContext();
				}
			}
		}
	}

	/** Makes the context current for a call on memory still allocated in it, the backend closed or not. */
	CudaDriver bindRetained() {
		if (this.contextReleased) {
			throw new IllegalStateException("the CUDA context of device " + this.ordinal + " is released");
		}
		this.guarded.setCurrentContext(this.context);
		return this.guarded;
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

	/** Closes the device to new work; its context is released now, or when the last of its allocations is freed. */
	synchronized void release() {
		if (!this.released) {
			this.released = true;
			if (this.held == 0) {
				releaseContext();
			}
		}
	}

	private void releaseContext() {
		this.contextReleased = true;
		this.guarded.releasePrimaryContext(this.ordinal);
	}

}
