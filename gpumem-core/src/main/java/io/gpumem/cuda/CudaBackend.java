package io.gpumem.cuda;

import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;

import io.gpumem.backend.GpuBackend;
import io.gpumem.backend.VirtualMemory;
import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.DeviceHealth;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.memory.MemoryKind;
import io.gpumem.stream.GpuStream;

/**
 * One CUDA device through the driver API: device, pinned and unified allocators, memory info and
 * streams, with the device's primary context retained once and made current on the calling thread in
 * every operation. Each allocation is one driver call; pools cut their small blocks from large
 * allocations of their own, which they can give back whole.
 */
public final class CudaBackend implements GpuBackend {

	private final CudaDevice device;

	private final boolean concurrentManagedAccess;

	private final Map<MemoryKind, MemoryAllocator> allocators = new EnumMap<>(MemoryKind.class);

	private CudaAsyncAllocator streamOrdered;

	private VirtualMemory virtualMemory;

	/** Whether each peer device asked about can be reached directly, with access enabled both ways. */
	private final Map<CudaDevice, Boolean> peers = new ConcurrentHashMap<>();

	private CudaBackend(CudaDevice device, boolean concurrentManagedAccess) {
		this.device = device;
		this.concurrentManagedAccess = concurrentManagedAccess;
		for (MemoryKind kind : MemoryKind.values()) {
			this.allocators.put(kind, new CudaAllocator(device, kind));
		}
	}

	/**
	 * Opens device {@code device} through JCuda.
	 * @throws CudaUnavailableException with the probe's reason if the device cannot be used
	 */
	public static CudaBackend open(int device) {
		CudaProbeResult probe = CudaProbe.probe(device);
		if (!probe.usable()) {
			throw new CudaUnavailableException(probe);
		}
		return open(CudaProbe.jcuda(), device);
	}

	/**
	 * Opens device {@code device} through the given driver, retaining its primary context.
	 * @throws CudaException if the driver refuses
	 */
	public static CudaBackend open(CudaDriver driver, int device) {
		driver.init();
		int count = driver.deviceCount();
		if (device < 0 || device >= count) {
			throw new IllegalArgumentException(
					"CUDA device " + device + " does not exist: the driver found " + count + " device(s)");
		}
		CudaDevice opened = new CudaDevice(driver, device, driver.deviceName(device));
		try {
			return new CudaBackend(opened, driver.concurrentManagedAccess(device));
		}
		catch (RuntimeException ex) {
			opened.release();
			throw ex;
		}
	}

	@Override
	public String name() {
		return "cuda";
	}

	@Override
	public int deviceId() {
		return this.device.ordinal();
	}

	@Override
	public String deviceName() {
		return this.device.name();
	}

	/** {@inheritDoc} As {@code cuDeviceGetPCIBusId} gives it. */
	@Override
	public Optional<String> pciBusId() {
		return Optional.of(this.device.driver().pciBusId(this.device.ordinal()));
	}

	@Override
	public MemoryAllocator allocator(MemoryKind kind) {
		return this.allocators.get(kind);
	}

	/** The device's stream-ordered pool ({@link CudaAsyncAllocator}), created on the first call. */
	@Override
	public synchronized MemoryAllocator streamOrderedAllocator() {
		if (this.streamOrdered == null) {
			this.streamOrdered = new CudaAsyncAllocator(this.device);
		}
		return this.streamOrdered;
	}

	/** {@link CudaVirtualMemory}, where the device reports support and the probe of one granule passes. */
	@Override
	public synchronized VirtualMemory virtualMemory() {
		if (this.virtualMemory == null) {
			this.virtualMemory = CudaVirtualMemory.open(this.device, this.allocators.get(MemoryKind.PINNED));
		}
		return this.virtualMemory;
	}

	CudaDevice device() {
		return this.device;
	}

	@Override
	public DeviceHealth health() {
		return this.device.health();
	}

	@Override
	public MemoryInfo memoryInfo() {
		return this.device.bind().memoryInfo();
	}

	/**
	 * Makes the device's primary context current on the calling thread: what code that calls the driver
	 * itself (loading modules, launching kernels) does before each call, as gpumem does.
	 */
	public void makeContextCurrent() {
		this.device.bind();
	}

	/**
	 * Loads a module of kernels on this device from a PTX image (its text as read from a file, with or without
	 * the NUL the driver wants after it), a cubin or a fat binary.
	 * @throws CudaException if the driver cannot load it (for PTX newer than the driver:
	 * {@code CUDA_ERROR_UNSUPPORTED_PTX_VERSION})
	 */
	public CudaModule loadModule(byte[] image) {
		boolean text = IntStream.range(0, Math.min(4, image.length))
			.allMatch((i) -> image[i] >= '\t' && image[i] < 0x7F);
		boolean unterminated = image.length > 0 && image[image.length - 1] != 0;
		byte[] copy = Arrays.copyOf(image, (text && unterminated) ? image.length + 1 : image.length);
		return new CudaModule(this.device, this.device.bind().loadModule(copy));
	}

	/**
	 * Whether {@code peer} is another device of the same driver that this device can reach directly and
	 * that can reach this one ({@code cuDeviceCanAccessPeer} both ways); on the first ask for a peer that
	 * can, access is enabled in both contexts ({@code cuCtxEnablePeerAccess}).
	 */
	@Override
	public boolean peerAccess(GpuBackend peer) {
		if (!(peer instanceof CudaBackend other) || other.device == this.device
				|| other.device.driver() != this.device.driver()) {
			return false;
		}
		return this.peers.computeIfAbsent(other.device, (device) -> enablePeerAccess(this.device, device));
	}

	private static boolean enablePeerAccess(CudaDevice device, CudaDevice peer) {
		CudaDriver driver = device.driver();
		if (!driver.canAccessPeer(device.ordinal(), peer.ordinal())
				|| !driver.canAccessPeer(peer.ordinal(), device.ordinal())) {
			return false;
		}
		enable(device, peer);
		enable(peer, device);
		return true;
	}

	private static void enable(CudaDevice device, CudaDevice peer) {
		try {
			device.bind().enablePeerAccess(peer.context());
		}
		catch (CudaException ex) {
			if (ex.code() != CudaException.PEER_ACCESS_ALREADY_ENABLED) {
				throw ex;
			}
		}
	}

	@Override
	public GpuStream createStream() {
		return new CudaStream(this.device, this.device.bind().createStream(), this.concurrentManagedAccess);
	}

	@Override
	public String describe() {
		return "cuda device " + deviceId() + " (" + deviceName() + ", " + ByteSizes.format(memoryInfo().totalBytes())
				+ ")";
	}

	/** Destroys the stream-ordered pool, if one was made, and releases the primary context; a second call does nothing. */
	@Override
	public synchronized void close() {
		try {
			if (this.streamOrdered != null) {
				this.streamOrdered.close();
			}
		}
		finally {
			this.device.release();
		}
	}

	@Override
	public String toString() {
		return "cuda backend, device " + deviceId() + " (" + deviceName() + ")";
	}

}
