package io.gpumem.memory;

import java.util.Locale;

/** Formats byte counts for people, as in "64.00 MiB". */
public final class ByteSizes {

	private static final String[] UNITS = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };

	private ByteSizes() {
	}

	/** A byte count in binary units with two decimals, or plain bytes below 1 KiB. */
	public static String format(long bytes) {
		if (bytes < 1024 && bytes > -1024) {
			return bytes + " B";
		}
		double value = bytes;
		int unit = 0;
		while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) {
			value /= 1024;
			unit++;
		}
		return String.format(Locale.ROOT, "%.2f %s", value, UNITS[unit]);
	}

	/**
	 * A byte count in the largest of B, KB, MB, GB and TB (binary multiples) that holds it exactly, as
	 * configuration names sizes: 4096 is "4KB", 1000 is "1000B".
	 */
	public static String exact(long bytes) {
		String[] units = { "B", "KB", "MB", "GB", "TB" };
		int unit = 0;
		while (unit < units.length - 1 && bytes != 0 && bytes % 1024 == 0) {
			bytes /= 1024;
			unit++;
		}
		return bytes + units[unit];
	}

}
