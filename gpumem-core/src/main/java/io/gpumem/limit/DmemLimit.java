package io.gpumem.limit;

import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.gpumem.limit.LimitReading.Kind;

/**
 * Linux cgroup v2's device-memory controller, read from the process's own cgroup: {@code dmem.max}, the hard limit
 * (the smallest of the cgroup's and its ancestors'), and {@code dmem.min}, the memory protected from reclaim (the
 * process's own cgroup's; {@code dmem.low}'s protection is best effort, and not read). Each file holds a line per
 * region, its name and a number of bytes or {@code max} ({@code nvidia/00000000:1b:00.0/vidmem 42949672960}). A
 * region is the device's when its name holds the device's PCI address; where the backend knows none (the host
 * backend), the file's one region where it lists one.
 */
final class DmemLimit implements LimitSource {

	private static final Logger LOGGER = System.getLogger(DmemLimit.class.getName());

	private static final String SHARING = "cgroup dmem";

	private static final Pattern PCI_ADDRESS = Pattern
		.compile("([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\\.([0-7])");

	private static final String FORM = "a line per region: its name, then a number of bytes or max";

	private final Path root;

	private final Path selfCgroup;

	/**
	 * @param root where the cgroup v2 hierarchy is mounted, as {@code /sys/fs/cgroup}
	 * @param selfCgroup the file naming the process's cgroup, as {@code /proc/self/cgroup}
	 */
	DmemLimit(Path root, Path selfCgroup) {
		this.root = root;
		this.selfCgroup = selfCgroup;
	}

	@Override
	public List<LimitReading> read(SharedDevice device) {
		String cgroup = cgroup();
		if (cgroup == null) {
			return List.of();
		}
		List<LimitReading> readings = new ArrayList<>();
		LimitReading max = null;
		for (String group = cgroup; group != null; group = parent(group)) {
			LimitReading limit = region(group, "dmem.max", device, Kind.ENFORCED);
			if (limit != null && (max == null || limit.bytes() < max.bytes())) {
				max = limit;
			}
		}
		if (max != null) {
			readings.add(max);
		}
		LimitReading min = region(cgroup, "dmem.min", device, Kind.PROTECTED);
		if (min != null && min.bytes() > 0) {
			readings.add(min);
		}
		return readings;
	}

	/** The process's cgroup v2 path, as {@code /kubepods/pod1/c1}, or null where there is none. */
	private String cgroup() {
		for (String line : lines(this.selfCgroup)) {
			if (line.startsWith("0::")) {
				String path = line.substring(3).trim();
				return path.isEmpty() ? "/" : path;
			}
		}
		return null;
	}

	private static String parent(String group) {
		if (group.equals("/")) {
			return null;
		}
		int slash = group.lastIndexOf('/');
		return (slash <= 0) ? "/" : group.substring(0, slash);
	}

	/** The device's region of {@code file} in {@code group}, or null where the file or the region sets nothing. */
	private LimitReading region(String group, String file, SharedDevice device, Kind kind) {
		Path path = this.root.resolve(group.substring(1)).resolve(file);
		String origin = file + " of cgroup " + group;
		Map<String, String> regions = new LinkedHashMap<>();
		for (String line : lines(path)) {
			if (line.isBlank()) {
				continue;
			}
			String[] fields = line.trim().split("\\s+");
			if (fields.length != 2) {
				throw new InvalidLimitException(origin, line, FORM);
			}
			regions.put(fields[0], fields[1]);
		}
		String region = regionOf(device, regions);
		if (region == null) {
			return null;
		}
		String value = regions.get(region);
		if (value.equals("max")) {
			return null;
		}
		try {
			long bytes = Long.parseLong(value);
			if (bytes >= 0) {
				return new LimitReading(bytes, origin + " (" + region + ")", SHARING, kind);
			}
		}
		catch (NumberFormatException ex) {
			// named below, with the region
		}
		throw new InvalidLimitException(origin + " (" + region + ")", value, "a number of bytes or max");
	}

	/**
	 * The device's region: among those whose name holds its PCI address (the domain compared as a number, as
	 * {@code nvidia/00000000:1b:00.0/vidmem} and {@code 0000:1b:00.0} name one device), a memory region
	 * ({@code vidmem}, {@code vram}) first.
	 */
	private static String regionOf(SharedDevice device, Map<String, String> regions) {
		if (device.pciBusId() == null) {
			return (regions.size() == 1) ? regions.keySet().iterator().next() : null;
		}
		long[] address = pciAddress(device.pciBusId());
		List<String> matching = regions.keySet()
			.stream()
			.filter((region) -> address != null && Arrays.equals(address, pciAddress(region)))
			.toList();
		return matching.stream()
			.filter((region) -> region.contains("vidmem") || region.contains("vram"))
			.findFirst()
			.orElse(matching.isEmpty() ? null : matching.get(0));
	}

	/** Domain, bus, device and function of the first PCI address in {@code text}, or null where it holds none. */
	private static long[] pciAddress(String text) {
		Matcher address = PCI_ADDRESS.matcher(text);
		if (!address.find()) {
			return null;
		}
		long[] parts = new long[4];
		for (int i = 0; i < 4; i++) {
			parts[i] = Long.parseLong(address.group(i + 1), 16);
		}
		return parts;
	}

	private static List<String> lines(Path path) {
		try {
			return Files.readAllLines(path);
		}
		catch (NoSuchFileException ex) {
			return List.of();
		}
		catch (IOException ex) {
			LOGGER.log(Level.WARNING, "gpumem could not read " + path + ", so it reads no device memory limit there",
					ex);
			return List.of();
		}
	}

}
