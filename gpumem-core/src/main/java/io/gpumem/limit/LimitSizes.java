package io.gpumem.limit;

import java.math.BigDecimal;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the sizes GPU-sharing systems write, in binary multiples as their tools take them: a whole number with at most
 * one letter of k, m or g, as HAMi's hook reads it ({@link #HAMI}: {@code 300m}, {@code 4G}); or a number with a unit
 * of K, M, G or T, with or without {@code i} and {@code B} ({@link #UNITS}: {@code 512MB}, {@code 2000Mi},
 * {@code 1.5G}); a bare number in the unit its source names.
 */
final class LimitSizes {

	/** HAMi's form: what its hook would read otherwise ({@code 2000Mi} as 2000 bytes) is refused, not guessed. */
	static final Pattern HAMI = Pattern.compile("(\\d+)([kKmMgG])?");

	/** NVIDIA's forms, and quantities as Kubernetes writes them (but {@code M} and {@code G} binary, as NVIDIA's). */
	static final Pattern UNITS = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(?:([kKmMgGtT])[iI]?)?[bB]?");

	private LimitSizes() {
	}

	/**
	 * The bytes {@code value} states in {@code form}, a bare number counting {@code bareUnit} bytes.
	 * @throws InvalidLimitException naming {@code origin} and {@code acceptedForm} if it is no such size, or zero
	 */
	static long parse(String origin, String value, Pattern form, long bareUnit, String acceptedForm) {
		Matcher size = form.matcher(value.trim());
		if (!size.matches()) {
			throw new InvalidLimitException(origin, value, acceptedForm);
		}
		long unit = (size.group(2) != null) ? multiple(size.group(2)) : bareUnit;
		try {
			long bytes = new BigDecimal(size.group(1)).multiply(BigDecimal.valueOf(unit)).longValueExact();
			if (bytes <= 0) {
				throw new InvalidLimitException(origin, value, acceptedForm + ", above zero");
			}
			return bytes;
		}
		catch (ArithmeticException ex) {
			throw new InvalidLimitException(origin, value, acceptedForm + ", a whole number of bytes below 8 EiB");
		}
	}

	private static long multiple(String unit) {
		return switch (unit.toLowerCase(Locale.ROOT)) {
			case "k" -> 1L << 10;
			case "m" -> 1L << 20;
			case "g" -> 1L << 30;
			default -> 1L << 40;
		};
	}

}
