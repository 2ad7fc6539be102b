package io.gpumem.limit;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import io.gpumem.limit.LimitReading.Kind;

/**
 * The share of a device a scheduler gave the pod without enforcing it, as KAI's GPU sharing does:
 * {@code GPU_PORTION}, a fraction of the device ({@code 0.50}), and {@code GPU_MEMORY_LIMIT}, a size ({@code 2000Mi},
 * {@code 4G}; a bare number counts MiB, as KAI's {@code gpu-memory} request does). Nothing stops an allocation beyond
 * them, so the service keeps them itself.
 */
final class AdvisoryLimit implements LimitSource {

	static final String PORTION = "GPU_PORTION";

	static final String MEMORY = "GPU_MEMORY_LIMIT";

	private static final String SHARING = "scheduler's share, not enforced";

	private final Function<String, String> environment;

	AdvisoryLimit(Function<String, String> environment) {
		this.environment = environment;
	}

	@Override
	public List<LimitReading> read(SharedDevice device) {
		List<LimitReading> readings = new ArrayList<>();
		String portion = this.environment.apply(PORTION);
		if (portion != null && !portion.isBlank()) {
			long bytes = portion(portion, device.cardBytes());
			readings.add(new LimitReading(bytes, PORTION, SHARING, Kind.ADVISORY));
		}
		String memory = this.environment.apply(MEMORY);
		if (memory != null && !memory.isBlank()) {
			readings.add(new LimitReading(LimitSizes.parse(MEMORY, memory, LimitSizes.UNITS, 1L << 20,
					"a number of MiB, or a number with Ki, Mi, Gi or K, M, G (2000Mi, 4G)"), MEMORY, SHARING,
					Kind.ADVISORY));
		}
		return readings;
	}

	private static long portion(String value, long cardBytes) {
		try {
			BigDecimal fraction = new BigDecimal(value.trim());
			if (fraction.signum() > 0 && fraction.compareTo(BigDecimal.ONE) <= 0) {
				return fraction.multiply(BigDecimal.valueOf(cardBytes))
					.setScale(0, RoundingMode.FLOOR)
					.longValueExact();
			}
		}
		catch (NumberFormatException ex) {
			// named below
		}
		throw new InvalidLimitException(PORTION, value, "a fraction of the device above 0 and at most 1 (0.50)");
	}

}
