package io.gpumem.benchmarks;

import java.io.File;
import java.util.Arrays;
import java.util.Locale;
import java.util.logging.Level;
import java.util.logging.Logger;

import tools.jackson.databind.json.JsonMapper;

import io.gpumem.memory.ByteSizes;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PoolPreset;
import io.gpumem.pool.advice.HistoryReplay;
import io.gpumem.pool.diagnostics.PoolHistory;

/**
 * Replays a pool's recorded history (what {@code GET /actuator/gpumem/{pool}/history} answers, recorded with
 * {@code gpumem.history.buffers: all}) against settings and a device capacity, and prints, per settings, the
 * peak reserved bytes against the recorded peak, held per lent, fresh allocations, fragmentation and whether
 * the pool would have run out.
 * <p>
 * {@code java -cp benchmarks.jar io.gpumem.benchmarks.Replay HISTORY.json CAPACITY [SETTINGS ...]}, where
 * CAPACITY is as {@code 96MB} and each SETTINGS a comma-separated list of {@code preset=NAME},
 * {@code segment-size=SIZE}, {@code max-cached=SIZE}, {@code size-classes=SIZE:SIZE:...} or
 * {@code warm=SIZE:COUNT}; none replays the defaults.
 */
public final class Replay {

	/** gpumem's loggers, kept from the collector so that each replayed pool's start is not logged. */
	private static final Logger QUIET = Logger.getLogger("io.gpumem");

	private Replay() {
	}

	public static void main(String[] args) throws Exception {
		if (args.length < 2) {
			System.err.println("usage: Replay HISTORY.json CAPACITY [SETTINGS ...], SETTINGS as segment-size=8MB,"
					+ "max-cached=64MB,size-classes=4KB:64KB:1MB,warm=64KB:16,preset=default");
			System.exit(2);
		}
		QUIET.setLevel(Level.WARNING);
		PoolHistory history = JsonMapper.shared().readValue(new File(args[0]), PoolHistory.class);
		long capacity = bytes(args[1]);
		String[] settings = (args.length > 2) ? Arrays.copyOfRange(args, 2, args.length) : new String[] { "" };
		System.out.printf(Locale.ROOT, "Replay of pool '%s': %d events on a device of %s%n%n", history.pool(),
				history.events().size(), ByteSizes.format(capacity));
		System.out.println("| settings | acquires | peak reserved | recorded peak | replayed / recorded | peak lent "
				+ "| held / lent | fresh allocations | fragmentation at peak | waited | ran out |");
		System.out.println("|---|---|---|---|---|---|---|---|---|---|---|");
		for (String setting : settings) {
			HistoryReplay.ReplayResult result = HistoryReplay.replay(history, config(setting), capacity);
			System.out.printf(Locale.ROOT, "| %s | %d | %s | %s | %.3f | %s | %.3f | %d | %.3f | %d | %s |%n",
					setting.isEmpty() ? "defaults" : setting, result.acquires(),
					ByteSizes.format(result.peakReservedBytes()), ByteSizes.format(result.recordedPeakReservedBytes()),
					(double) result.peakReservedBytes() / result.recordedPeakReservedBytes(),
					ByteSizes.format(result.peakLentBytes()), result.heldPerLent(), result.freshAllocations(),
					result.fragmentation(), result.waits(), result.ranOut() ? result.failures() + " acquires failed" : "no");
		}
	}

	/** A pool configuration from {@code key=value} pairs. */
	static PoolConfig config(String settings) {
		PoolConfig.Builder builder = PoolConfig.builder("replay");
		for (String setting : settings.split(",")) {
			if (setting.isBlank()) {
				continue;
			}
			String[] pair = setting.split("=", 2);
			String value = pair[1];
			switch (pair[0]) {
				case "preset" -> builder.preset(PoolPreset.fromConfigName(value));
				case "segment-size" -> builder.segmentSize(bytes(value));
				case "max-cached" -> builder.maxCachedBytes(bytes(value));
				case "size-classes" -> builder.sizeClasses(Arrays.stream(value.split(":")).mapToLong(Replay::bytes)
					.toArray());
				case "warm" -> builder.warm(bytes(value.split(":")[0]), Integer.parseInt(value.split(":")[1]));
				default -> throw new IllegalArgumentException("unknown setting '" + pair[0] + "' in " + settings);
			}
		}
		return builder.build();
	}

	/** Bytes of a size as {@code 512}, {@code 64KB}, {@code 8MB} or {@code 1GB} (powers of 1024, as Spring's). */
	static long bytes(String size) {
		String upper = size.trim().toUpperCase(Locale.ROOT);
		String[] units = { "KB", "MB", "GB", "TB" };
		for (int i = units.length - 1; i >= 0; i--) {
			if (upper.endsWith(units[i])) {
				return Long.parseLong(upper.substring(0, upper.length() - 2).trim()) << (10 * (i + 1));
			}
		}
		return Long.parseLong(upper.endsWith("B") ? upper.substring(0, upper.length() - 1) : upper);
	}

}
