package io.gpumem.device;

import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.pool.MemoryPool;
import io.gpumem.stream.GpuStream;

/**
 * The GPUs gpumem manages, by ordinal, the first given being the primary: a request takes a device by
 * ordinal, the least loaded one, or the one its thread is bound to; and buffers are copied between
 * devices, peer to peer where the devices can reach each other and through pinned memory where not.
 */
public final class GpumemDevices {

	/** The most bytes staged through pinned memory at once when two devices cannot reach each other. */
	static final long STAGING_BYTES = 4L << 20;

	private final Map<Integer, GpuDevice> devices;

	private final GpuDevice primary;

	private final ThreadLocal<GpuDevice> affinity = new ThreadLocal<>();

	private final LongAdder peerCopies = new LongAdder();

	private final LongAdder peerBytes = new LongAdder();

	private final LongAdder stagedCopies = new LongAdder();

	private final LongAdder stagedBytes = new LongAdder();

	/**
	 * @param devices the devices, the primary first
	 * @throws IllegalArgumentException if there is none, or two have the same ordinal
	 */
	public GpumemDevices(List<GpuDevice> devices) {
		if (devices.isEmpty()) {
			throw new IllegalArgumentException("gpumem needs at least one device");
		}
		Map<Integer, GpuDevice> byOrdinal = new LinkedHashMap<>();
		for (GpuDevice device : devices) {
			if (byOrdinal.putIfAbsent(device.ordinal(), device) != null) {
				throw new IllegalArgumentException("device " + device.ordinal() + " is listed twice");
			}
		}
		this.devices = Collections.unmodifiableMap(byOrdinal);
		this.primary = devices.get(0);
	}

	/** The device requests use unless they pick another: the first given. */
	public GpuDevice primary() {
		return this.primary;
	}

	/** Every device, the primary first. */
	public List<GpuDevice> all() {
		return List.copyOf(this.devices.values());
	}

	/**
	 * The device of that ordinal.
	 * @throws IllegalArgumentException if gpumem manages no device of that ordinal
	 */
	public GpuDevice get(int ordinal) {
		GpuDevice device = this.devices.get(ordinal);
		if (device == null) {
			throw new IllegalArgumentException(
					"gpumem manages no device " + ordinal + ": its devices are " + this.devices.keySet());
		}
		return device;
	}

	/**
	 * Of the devices that have not failed, the one whose pools lend the smallest share of its memory
	 * ({@link GpuDevice#load()}); ties go to the first listed. When every device has failed, the primary, whose
	 * parts refuse work naming the failure.
	 */
	public GpuDevice leastLoaded() {
		return this.devices.values()
			.stream()
			.filter((device) -> device.failure().isEmpty())
			.min(Comparator.comparingDouble(GpuDevice::load))
			.orElse(this.primary);
	}

	/** The device the calling thread is bound to ({@link #bind(int)}), or the primary. */
	public GpuDevice current() {
		GpuDevice bound = this.affinity.get();
		return (bound != null) ? bound : this.primary;
	}

	/**
	 * Binds the calling thread to a device until the returned binding is closed, which restores the
	 * thread's previous device, as CUDA's current device is per thread.
	 * @throws IllegalArgumentException if gpumem manages no device of that ordinal
	 */
	public Binding bind(int ordinal) {
		GpuDevice previous = this.affinity.get();
		this.affinity.set(get(ordinal));
		return new Binding(previous);
	}

	/** Whether copies between the two devices go peer to peer rather than through pinned memory. */
	public boolean peerAccess(GpuDevice from, GpuDevice to) {
		return from == to || from.backend().peerAccess(to.backend());
	}

	/**
	 * Copies {@code bytes} bytes from the start of {@code source}, a buffer of {@code from}, to the start of
	 * {@code target}, a buffer of {@code to}, and returns when they are there: peer to peer on a stream of
	 * {@code to} where the devices can reach each other, otherwise in steps through a buffer of the pinned
	 * pool of {@code from} (or of {@code to}, when {@code from} has none). Work already enqueued on
	 * {@code source} must have completed, as for any copy on a stream of its own.
	 * @throws IndexOutOfBoundsException if either buffer is shorter than {@code bytes}
	 * @throws IllegalStateException if the copy must be staged and neither device has a pinned pool
	 */
	public void copy(GpuDevice from, GpuBuffer source, GpuDevice to, GpuBuffer target, long bytes) {
		source.checkRange(0, bytes);
		target.checkRange(0, bytes);
		if (peerAccess(from, to)) {
			try (GpuStream stream = to.backend().createStream()) {
				stream.copy(source, 0, target, 0, bytes);
			}
			this.peerCopies.increment();
			this.peerBytes.add(bytes);
			return;
		}
		MemoryPool staging = from.pinnedPool()
			.or(to::pinnedPool)
			.orElseThrow(() -> new IllegalStateException("devices " + from.ordinal() + " and " + to.ordinal()
					+ " cannot reach each other and neither has a pinned pool to stage the copy through"));
		try (GpuBuffer step = staging.acquire(Math.min(bytes, STAGING_BYTES));
				GpuStream out = from.backend().createStream();
				GpuStream in = to.backend().createStream()) {
			for (long offset = 0; offset < bytes; offset += step.size()) {
				long length = Math.min(step.size(), bytes - offset);
				out.copy(source, offset, step, 0, length);
				out.synchronize();
				in.copy(step, 0, target, offset, length);
				in.synchronize();
			}
		}
		this.stagedCopies.increment();
		this.stagedBytes.add(bytes);
	}

	/** The copies between devices so far, by route. */
	public CopyStatistics copyStatistics() {
		return new CopyStatistics(this.peerCopies.sum(), this.peerBytes.sum(), this.stagedCopies.sum(),
				this.stagedBytes.sum());
	}

	@Override
	public String toString() {
		return "gpumem devices " + this.devices.values();
	}

	/**
	 * Copies between devices: those that went peer to peer and those staged through pinned memory, with
	 * their bytes.
	 */
	public record CopyStatistics(long peerCopies, long peerBytes, long stagedCopies, long stagedBytes) {
	}

	/** A thread's binding to a device; closing it restores the device the thread had before. */
	public final class Binding implements AutoCloseable {

		private final GpuDevice previous;

		private Binding(GpuDevice previous) {
			this.previous = previous;
		}

		@Override
		public void close() {
			if (this.previous != null) {
				GpumemDevices.this.affinity.set(this.previous);
			}
			else {
				GpumemDevices.this.affinity.remove();
			}
		}

	}

}
