package io.gpumem.limit;

import java.util.List;
import java.util.function.Function;

import io.gpumem.limit.LimitReading.Kind;

/**
 * NVIDIA MPS's limit of a client process's device memory, {@code CUDA_MPS_PINNED_DEVICE_MEM_LIMIT}: one size for
 * every device ({@code 2G}) or a size per device, named by its ordinal or its UUID as {@code CUDA_VISIBLE_DEVICES}
 * names it ({@code 0=2G,1=4G}, {@code GPU-8932f937=2G}), which the MPS server enforces.
 */
final class MpsLimit implements LimitSource {

	static final String VARIABLE = "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT";

	private static final String FORM = "one size for every device (2G) or sizes per device ordinal or UUID "
			+ "(0=2G,1=512M), each a number of bytes or a number with K, M or G";

	private final Function<String, String> environment;

	MpsLimit(Function<String, String> environment) {
		this.environment = environment;
	}

	@Override
	public List<LimitReading> read(SharedDevice device) {
		String value = this.environment.apply(VARIABLE);
		if (value == null || value.isBlank()) {
			return List.of();
		}
		if (!value.contains("=")) {
			return List.of(reading(LimitSizes.parse(VARIABLE, value, LimitSizes.UNITS, 1, FORM)));
		}
		Long bytes = null;
		for (String entry : value.split(",")) {
			int equals = entry.indexOf('=');
			if (equals < 0) {
				throw new InvalidLimitException(VARIABLE, value, FORM);
			}
			String key = entry.substring(0, equals).trim();
			long size = LimitSizes.parse(VARIABLE, entry.substring(equals + 1), LimitSizes.UNITS, 1, FORM);
			if (names(key, device, value)) {
				bytes = size;
			}
		}
		return (bytes != null) ? List.of(reading(bytes)) : List.of();
	}

	/** Whether {@code key}, an ordinal or the start of a UUID, names the device. */
	private static boolean names(String key, SharedDevice device, String value) {
		if (key.startsWith("GPU-") || key.startsWith("MIG-")) {
			String visible = device.visibleAs();
			return visible != null && (visible.startsWith(key) || key.startsWith(visible));
		}
		try {
			int ordinal = Integer.parseInt(key);
			if (ordinal >= 0) {
				return ordinal == device.ordinal();
			}
		}
		catch (NumberFormatException ex) {
			// named below, with the whole value
		}
		throw new InvalidLimitException(VARIABLE, value, FORM);
	}

	private static LimitReading reading(long bytes) {
		return new LimitReading(bytes, VARIABLE, "MPS", Kind.ENFORCED);
	}

}
