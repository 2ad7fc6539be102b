package io.gpumem.backend;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

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
	 * (JCuda when {@code null}).
	 */
	public static BackendSelection select(BackendType type, int device, long hostCapacityBytes,
			long hostPinnedCapacityBytes, Supplier<? extends CudaDriver> driver) {
		Objects.requireNonNull(type, "backend type");
		if (device < 0) {
			throw new InvalidSettingException("device", device, "must be 0 or more");
		}
		Supplier<? extends CudaDriver> loader = (driver != null) ? driver : CudaProbe::jcuda;
		BackendSelection selection = switch (type) {
			case HOST -> host(0, hostCapacityBytes, hostPinnedCapacityBytes, "the host backend was configured", null);
			case CUDA -> {
				CudaProbeResult probe = CudaProbe.probe(device, loader);
				if (!probe.usable()) {
					throw new CudaUnavailableException(probe);
				}
				yield cuda(device, loader, probe, "the CUDA backend was configured: " + probe.reason());
			}
			case AUTO -> {
				CudaProbeResult probe = CudaProbe.probe(device, loader);
				yield probe.usable() ? cuda(device, loader, probe, "a usable CUDA device was found: " + probe.reason())
						: host(0, hostCapacityBytes, hostPinnedCapacityBytes, "no usable CUDA device: " + probe.reason(),
								probe);
			}
		};
		logger.log(Level.INFO, "gpumem uses the {0} ({1})", selection.backend().describe(), selection.reason());
		return selection;
	}

	/**
	 * Opens every device {@code devices} selects on one backend: CUDA devices through one driver when the
	 * probe of the first selected device finds it usable (as {@link #select} decides for one device), or
	 * emulated devices of the host backend, each with the given capacities: {@code hostDevices} of them, or
	 * as many as the selection lists when more.
	 * @return a selection per device, in the order selected
	 * @throws CudaUnavailableException if {@code type} is {@code CUDA} and the first device is not usable
	 * @throws io.gpumem.config.InvalidSettingException if a selected device does not exist
	 */
	public static List<BackendSelection> selectAll(BackendType type, DeviceSelection devices, long hostCapacityBytes,
			long hostPinnedCapacityBytes, int hostDevices, Supplier<? extends CudaDriver> driver) {
		Objects.requireNonNull(type, "backend type");
		Supplier<? extends CudaDriver> loader = (driver != null) ? driver : CudaProbe::jcuda;
		CudaProbeResult probe = (type != BackendType.HOST) ? CudaProbe.probe(devices.first(), loader) : null;
		if (type == BackendType.CUDA && !probe.usable()) {
			throw new CudaUnavailableException(probe);
		}
		List<BackendSelection> opened = new ArrayList<>();
		try {
			if (probe != null && probe.usable()) {
				CudaDriver cuda = loader.get();
				cuda.init();
				int count = cuda.deviceCount();
				String reason = ((type == BackendType.CUDA) ? "the CUDA backend was configured: "
						: "a usable CUDA device was found: ") + probe.reason();
				for (int ordinal : devices.resolve(count, "the CUDA driver found " + count + " device(s)")) {
					opened.add(new BackendSelection(CudaBackend.open(cuda, ordinal),
							(ordinal == devices.first()) ? reason : "as device " + devices.first() + ": " + reason, probe));
				}
			}
			else {
				if (hostDevices < 1) {
					throw new InvalidSettingException("host.devices", hostDevices, "must be 1 or more");
				}
				String reason = (type == BackendType.HOST) ? "the host backend was configured"
						: "no usable CUDA device: " + probe.reason();
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
		opened.forEach((selection) -> logger.log(Level.INFO, "gpumem uses the {0} ({1})",
				selection.backend().describe(), selection.reason()));
		return opened;
	}

	/** Opens the device the probe found usable, through the same driver, without probing again. */
	private static BackendSelection cuda(int device, Supplier<? extends CudaDriver> loader, CudaProbeResult probe,
			String reason) {
		return new BackendSelection(CudaBackend.open(loader.get(), device), reason, probe);
	}

	private static BackendSelection host(int ordinal, long capacityBytes, long pinnedCapacityBytes, String reason,
			CudaProbeResult probe) {
		return new BackendSelection(new HostBackend(ordinal, capacityBytes, pinnedCapacityBytes),
				reason + "; emulating a device of " + ByteSizes.format(capacityBytes) + " in host memory", probe);
	}

}
