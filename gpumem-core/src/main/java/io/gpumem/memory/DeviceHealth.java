package io.gpumem.memory;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Whether a device still works: once an error has left its context unusable (CUDA's sticky errors, or a fault
 * injected on the host backend), the device has failed for good, with the first such error. Pools over it then
 * lend nothing, the backend sends nothing more to its context, and the listeners hear of it once.
 */
public final class DeviceHealth {

	private static final System.Logger LOGGER = System.getLogger(DeviceHealth.class.getName());

	/** The error an injected fault fails the device with. */
	public static final String INJECTED_ERROR = "CUDA_ERROR_ILLEGAL_ADDRESS (700)";

	/** The health of a device nothing watches, such as an application's own allocator's: it never fails. */
	public static final DeviceHealth UNWATCHED = new DeviceHealth(-1, "unwatched");

	private final int device;

	private final String deviceName;

	private final List<Consumer<DeviceFailure>> listeners = new ArrayList<>();

	private volatile GpuDeviceFailedException failed;

	/** Acquires left before an injected fault, or null when none is injected. */
	private volatile AtomicLong faultIn;

	public DeviceHealth(int device, String deviceName) {
		this.device = device;
		this.deviceName = deviceName;
	}

	/** The failure, empty while the device works. */
	public Optional<DeviceFailure> failure() {
		GpuDeviceFailedException failed = this.failed;
		return (failed != null) ? Optional.of(failed.failure()) : Optional.empty();
	}

	/** Whether the device has failed for good. */
	public boolean isFailed() {
		return this.failed != null;
	}

	/**
	 * Refuses work on a failed device.
	 * @throws GpuDeviceFailedException naming the first error, if the device has failed
	 */
	public void check() {
		GpuDeviceFailedException failed = this.failed;
		if (failed != null) {
			throw new GpuDeviceFailedException(failed.failure(), failed.getCause());
		}
	}

	/**
	 * What a pool does before each acquire: refuses work on a failed device, and makes an injected fault happen
	 * when its turn has come.
	 * @throws GpuDeviceFailedException naming the first error, if the device has failed
	 */
	public void checkAcquire() {
		check();
		AtomicLong faultIn = this.faultIn;
		if (faultIn != null && faultIn.getAndDecrement() <= 0) {
			throw fail(INJECTED_ERROR, "acquire", null);
		}
	}

	/**
	 * Makes the device fail for good at the acquire after the next {@code acquires}, with
	 * {@value #INJECTED_ERROR}'s behaviour: to rehearse what a device fault does to a service (its health, its
	 * liveness, its answers) without a faulty kernel.
	 */
	public void injectFault(long acquires) {
		if (this == UNWATCHED) {
			throw new IllegalStateException("an unwatched device cannot fail");
		}
		if (acquires < 0) {
			throw new IllegalArgumentException("the acquires before an injected device fault must not be negative: "
					+ acquires);
		}
		this.faultIn = new AtomicLong(acquires);
	}

	/**
	 * Marks the device failed for good by {@code error} met in {@code call} on this thread, unless it already
	 * failed: the first failure is logged and heard by the listeners, once.
	 * @return the exception to throw, naming the first failure
	 */
	public GpuDeviceFailedException fail(String error, String call, Throwable cause) {
		if (this == UNWATCHED) {
			throw new IllegalStateException("an unwatched device cannot fail: " + error);
		}
		GpuDeviceFailedException first;
		List<Consumer<DeviceFailure>> told;
		synchronized (this) {
			if (this.failed != null) {
				return new GpuDeviceFailedException(this.failed.failure(), cause);
			}
			first = new GpuDeviceFailedException(new DeviceFailure(this.device, this.deviceName, error, call,
					Thread.currentThread().getName(), Instant.now()), cause);
			this.failed = first;
			told = List.copyOf(this.listeners);
		}
		LOGGER.log(System.Logger.Level.ERROR, first.getMessage(), cause);
		told.forEach((listener) -> tell(listener, first.failure()));
		return first;
	}

	/** Has {@code listener} told of the failure once it happens, at once if it has; never for an unwatched device. */
	public void onFailure(Consumer<DeviceFailure> listener) {
		Objects.requireNonNull(listener, "listener");
		if (this == UNWATCHED) {
			return;
		}
		GpuDeviceFailedException failed;
		synchronized (this) {
			failed = this.failed;
			if (failed == null) {
				this.listeners.add(listener);
				return;
			}
		}
		tell(listener, failed.failure());
	}

	private static void tell(Consumer<DeviceFailure> listener, DeviceFailure failure) {
		try {
			listener.accept(failure);
		}
		catch (RuntimeException ex) {
			LOGGER.log(System.Logger.Level.WARNING, "A listener of the failure of device " + failure.device()
					+ " failed", ex);
		}
	}

}
