package io.gpumem.limit;

import java.util.List;
import java.util.function.Function;

import io.gpumem.limit.LimitReading.Kind;

/**
 * HAMi's limit of a container's device memory, enforced by its preloaded hook: {@code CUDA_DEVICE_MEMORY_LIMIT_<i>}
 * for device {@code i} of the container, else {@code CUDA_DEVICE_MEMORY_LIMIT} for every device ({@code 300m},
 * {@code 4g}).
 */
final class HamiLimit implements LimitSource {

	static final String VARIABLE = "CUDA_DEVICE_MEMORY_LIMIT";

	static final String SHARING = "HAMi";

	private static final String FORM = "a number of bytes, or a number with k, m or g (300m, 4g)";

	private final Function<String, String> environment;

	HamiLimit(Function<String, String> environment) {
		this.environment = environment;
	}

	@Override
	public List<LimitReading> read(SharedDevice device) {
		for (String variable : List.of(VARIABLE + "_" + device.ordinal(), VARIABLE)) {
			String value = this.environment.apply(variable);
			if (value != null && !value.isBlank()) {
				long bytes = LimitSizes.parse(variable, value, LimitSizes.HAMI, 1, FORM);
				return List.of(new LimitReading(bytes, variable, SHARING, Kind.ENFORCED));
			}
		}
		return List.of();
	}

}
