package io.gpumem.limit;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

import io.gpumem.backend.GpuBackend;
import io.gpumem.limit.LimitReading.Kind;
import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.MemoryInfo;

/**
 * Reads the limit of each device from every source at once: NVIDIA MPS, HAMi, the cgroup's device-memory controller
 * and a scheduler's advised share, each through its {@link LimitSource}; the smallest, with the card, is the
 * {@link DeviceLimit}. A MIG instance needs no source: the driver reports the instance's memory as the card's.
 * A figure above the card is taken as the card, with a WARN; one of no memory is refused. Where
 * {@code CUDA_VISIBLE_DEVICES} renumbers the devices, the per-device variables follow the process's numbering.
 */
public final class DeviceLimits {

	private static final Logger LOGGER = System.getLogger(DeviceLimits.class.getName());

	static final String VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES";

	static final String CONTAINER_DEVICES = "NVIDIA_VISIBLE_DEVICES";

	private final Function<String, String> environment;

	private final List<LimitSource> sources;

	/**
	 * Limits read from {@code environment} (a variable's value, or null where it is not set) and the cgroup v2
	 * hierarchy mounted at {@code cgroupRoot}, the process's cgroup named in {@code selfCgroup}.
	 */
	public DeviceLimits(Function<String, String> environment, Path cgroupRoot, Path selfCgroup) {
		this.environment = Objects.requireNonNull(environment, "environment");
		this.sources = List.of(new MpsLimit(environment), new HamiLimit(environment),
				new DmemLimit(cgroupRoot, selfCgroup), new AdvisoryLimit(environment));
	}

	/** Limits read from the process's environment and its cgroup, as Linux mounts and names it. */
	public static DeviceLimits system() {
		return system(System::getenv);
	}

	/**
	 * Limits read from {@code environment} and the process's cgroup, the cgroup v2 hierarchy at {@code /sys/fs/cgroup}
	 * or, on a host that mounts both versions, at {@code /sys/fs/cgroup/unified}.
	 */
	public static DeviceLimits system(Function<String, String> environment) {
		Path root = Path.of("/sys/fs/cgroup");
		Path unified = root.resolve("unified");
		boolean hybrid = !Files.exists(root.resolve("cgroup.controllers")) && Files.isDirectory(unified);
		return new DeviceLimits(environment, hybrid ? unified : root, Path.of("/proc/self/cgroup"));
	}

	/**
	 * The limit of {@code backend}'s device, its card's memory as the backend reports it now.
	 * @throws InvalidLimitException if a source is present but malformed
	 */
	public DeviceLimit read(GpuBackend backend) {
		MemoryInfo card = backend.memoryInfo();
		int ordinal = backend.deviceId();
		return read(new SharedDevice(ordinal, card.totalBytes(), backend.pciBusId().orElse(null), visibleAs(ordinal)),
				card);
	}

	/**
	 * The limit of {@code device}, whose driver reports {@code card} now.
	 * @throws InvalidLimitException if a source is present but malformed
	 */
	public DeviceLimit read(SharedDevice device, MemoryInfo card) {
		List<LimitReading> readings = new ArrayList<>();
		long limit = device.cardBytes();
		LimitReading winner = null;
		LimitReading protectedAmount = null;
		for (LimitSource from : this.sources) {
			for (LimitReading stated : from.read(device)) {
				LimitReading reading = atMostCard(stated, device);
				readings.add(reading);
				if (reading.bytes() == 0) {
					throw new InvalidLimitException(reading.origin(), "0 bytes",
							"above zero: a limit of no memory leaves gpumem nothing to lend");
				}
				if (reading.kind() == Kind.PROTECTED) {
					protectedAmount = reading;
				}
				else if (reading == stated
						&& (reading.bytes() < limit || (winner == null && reading.bytes() == limit))) {
					limit = reading.bytes();
					winner = reading;
				}
			}
		}
		long protectedBytes = (protectedAmount != null && protectedAmount.bytes() < limit) ? protectedAmount.bytes()
				: 0;
		boolean hooked = winner != null && winner.sharing().equals(HamiLimit.SHARING) && card.totalBytes() == limit;
		long context = (hooked && card.usedBytes() < limit) ? card.usedBytes() : 0;
		return new DeviceLimit(device, limit, (winner != null) ? winner.source() : DeviceLimit.card(device),
				winner != null, protectedBytes, (protectedBytes > 0) ? protectedAmount.source() : null, context,
				readings);
	}

	/**
	 * The entry that made device {@code ordinal} of this process: of {@code CUDA_VISIBLE_DEVICES}, else of
	 * {@code NVIDIA_VISIBLE_DEVICES}, which the container runtime exposes in its order (as Kubernetes' device plugin
	 * sets it); null where neither lists it.
	 */
	private String visibleAs(int ordinal) {
		for (String variable : List.of(VISIBLE_DEVICES, CONTAINER_DEVICES)) {
			String visible = this.environment.apply(variable);
			if (visible != null && !visible.isBlank() && !List.of("all", "none", "void").contains(visible.trim())) {
				String[] entries = visible.split(",");
				return (ordinal < entries.length) ? entries[ordinal].trim() : null;
			}
		}
		return null;
	}

	private static LimitReading atMostCard(LimitReading reading, SharedDevice device) {
		if (reading.bytes() <= device.cardBytes()) {
			return reading;
		}
		LOGGER.log(Level.WARNING, "{0} states {1} for device {2}, more than the {3} {4} has: gpumem takes {4}''s",
				reading.source(), ByteSizes.format(reading.bytes()), device.ordinal(),
				ByteSizes.format(device.cardBytes()), DeviceLimit.card(device));
		return new LimitReading(device.cardBytes(), reading.origin(), reading.sharing(), reading.kind());
	}

}
