package io.gpumem.device;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

import io.gpumem.backend.BackendType;
import io.gpumem.backend.GpuBackend;
import io.gpumem.config.InvalidSettingException;
import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.CudaDriver;
import io.gpumem.cuda.CudaProbe;
import io.gpumem.cuda.CudaProbeResult;
import io.gpumem.cuda.CudaUnavailableException;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.ByteSizes;

/**
 * The backend chosen for a {@link BackendType} and why: {@code auto} takes CUDA when the probe finds a
 * usable device and the host backend otherwise, {@code cuda} fails with the probe's reason, {@code host}
 * never probes. The choice and its reason are logged once, at INFO.
 *
 * @param backend the opened backend
 * @param reason why it was chosen, in words for logs and the endpoint
 * @param probe what the CUDA probe found, or {@code null} when the host backend was asked for
 */
public record BackendSelection(GpuBackend backend, String reason, CudaProbeResult probe) {

	private static final Logger logger = System.getLogger(BackendSelection.class.getName());

	public BackendSelection {
		Objects.requireNonNull(backend, "backend");
		Objects.requireNonNull(reason, "reason");
	}

	/**
	 * Opens the backend of the given type through JCuda.
	 * @param device the CUDA device ordinal
	 * @param hostCapacityBytes the emulated device's capacity, should the host backend be chosen
	 * @throws CudaUnavailableException if {@code type} is {@code CUDA} and no usable device is found
	 */
	public static BackendSelection select(BackendType type, int device, long hostCapacityBytes) {
		return select(type, device, hostCapacityBytes, hostCapacityBytes, null);
	}

	/**
	 * Opens the backend of the given type through JCuda, with a pinned-memory capacity of its own for the
	 * host backend.
	 */
	public static BackendSelection select(BackendType type, int device, long hostCapacityBytes,
			long hostPinnedCapacityBytes) {
		return select(type, device, hostCapacityBytes, hostPinnedCapacityBytes, null);
	}

	/**
	 * Opens the backend of the given type, probing CUDA through the driver {@code driver} supplies
	 * (JCuda when {@code null}), as {@link #selectAll} opens a selection of that one device.
	 */
	public static BackendSelection select(BackendType type, int device, long hostCapacityBytes,
			long hostPinnedCapacityBytes, Supplier<? extends CudaDriver> driver) {
		if (device < 0) {
			throw new InvalidSettingException("device", device, "must be 0 or more");
		}
		return selectAll(type, DeviceSelection.of(List.of(device)), hostCapacityBytes, hostPinnedCapacityBytes, 1,
				driver).get(0);
	}

	/**
	 * Opens every device {@code devices} selects on one backend: CUDA devices through one driver when the
	 * probe of the first selected device finds it usable, or emulated devices of the host backend, each with
	 * the given capacities: {@code hostDevices} of them, or as many as the selection lists when more.
	 * @return a selection per device, in the order selected
	 * @throws CudaUnavailableException if {@code type} is {@code CUDA} and the first device is not usable
	 * @throws io.gpumem.config.InvalidSettingException if a selected device does not exist
	 */
	public static List<BackendSelection> selectAll(BackendType type, DeviceSelection devices, long hostCapacityBytes,
			long hostPinnedCapacityBytes, int hostDevices, Supplier<? extends CudaDriver> driver) {
		Objects.requireNonNull(type, "backend type");
		Supplier<? extends CudaDriver> loader = loader(driver);
		CudaProbeResult probe = probe(type, devices.first(), loader);
		List<BackendSelection> opened = new ArrayList<>();
		try {
			if (probe != null && probe.usable()) {
				CudaDriver cuda = loader.get();
				cuda.init();
				int count = cuda.deviceCount();
				String reason = cudaReason(type, probe);
				for (int ordinal : devices.resolve(count, "the CUDA driver found " + count + " device(s)")) {
					String why = (ordinal == devices.first()) ? reason : "as device " + devices.first() + ": " + reason;
					opened.add(new BackendSelection(CudaBackend.open(cuda, ordinal), why, probe));
				}
			}
			else {
				if (hostDevices < 1) {
					throw new InvalidSettingException("host.devices", hostDevices, "must be 1 or more");
				}
				String reason = hostReason(probe);
				int emulated = Math.max(hostDevices, devices.needs());
				for (int ordinal : devices.resolve(emulated, "the host backend emulates " + emulated + " device(s)")) {
					opened.add(host(ordinal, hostCapacityBytes, hostPinnedCapacityBytes, reason, probe));
				}
			}
		}
		catch (RuntimeException ex) {
			opened.forEach((selection) -> selection.backend().close());
			throw ex;
		}
		opened.forEach(BackendSelection::log);
		return opened;
	}

	private static Supplier<? extends CudaDriver> loader(Supplier<? extends CudaDriver> driver) {
		return (driver != null) ? driver : CudaProbe::jcuda;
	}

	/** The probe of {@code device}, none for the host backend; a CUDA backend asked for must find it usable. */
	private static CudaProbeResult probe(BackendType type, int device, Supplier<? extends CudaDriver> loader) {
		if (type == BackendType.HOST) {
			return null;
		}
		CudaProbeResult probe = CudaProbe.probe(device, loader);
		if (type == BackendType.CUDA && !probe.usable()) {
			throw new CudaUnavailableException(probe);
		}
		return probe;
	}

	private static String cudaReason(BackendType type, CudaProbeResult probe) {
		return ((type == BackendType.CUDA) ? "the CUDA backend was configured: " : "a usable CUDA device was found: ")
				+ probe.reason();
	}

	/** Why the host backend: it was asked for ({@code probe} null), or the probe found no usable device. */
	private static String hostReason(CudaProbeResult probe) {
		return (probe == null) ? "the host backend was configured" : "no usable CUDA device: " + probe.reason();
	}

	private static void log(BackendSelection selection) {
		logger.log(Level.INFO, "gpumem uses the {0} ({1})", selection.backend().describe(), selection.reason());
	}

	private static BackendSelection host(int ordinal, long capacityBytes, long pinnedCapacityBytes, String reason,
			CudaProbeResult probe) {
		return new BackendSelection(new HostBackend(ordinal, capacityBytes, pinnedCapacityBytes),
				reason + "; emulating a device of " + ByteSizes.format(capacityBytes) + " in host memory", probe);
	}

}
