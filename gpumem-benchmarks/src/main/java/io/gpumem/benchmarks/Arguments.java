package io.gpumem.benchmarks;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The benchmark programs' options: {@code --name value} pairs, each name known with its default. */
final class Arguments {

	private Arguments() {
	}

	/**
	 * The value of each option in {@code defaults}, as {@code args} sets it or else its default.
	 * @throws IllegalArgumentException naming an option that is not known or has no value
	 */
	static Map<String, String> parse(List<String> args, Map<String, String> defaults) {
		Map<String, String> values = new LinkedHashMap<>(defaults);
		for (int i = 0; i < args.size(); i += 2) {
			if (!values.containsKey(args.get(i)) || i + 1 == args.size()) {
				throw new IllegalArgumentException("unknown option or missing value: " + args.get(i) + "; options are "
						+ values.keySet());
			}
			values.put(args.get(i), args.get(i + 1));
		}
		return values;
	}

}
