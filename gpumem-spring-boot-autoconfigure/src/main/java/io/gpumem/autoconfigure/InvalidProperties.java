package io.gpumem.autoconfigure;

import java.util.function.Supplier;
import java.util.function.UnaryOperator;

import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;
import org.springframework.util.unit.DataSize;

import io.gpumem.config.InvalidSettingException;

/**
 * Reports a setting core refuses as Boot's invalid value of the property it came from, whose failure
 * analysis names the property in kebab case with its value, where it was set and the rule.
 */
final class InvalidProperties {

	private InvalidProperties() {
	}

	/** Builds with {@code build}, naming a refused setting {@code prefix.setting}. */
	static <T> T under(String prefix, Supplier<T> build) {
		return named((setting) -> prefix + "." + setting, build);
	}

	/** Builds with {@code build}, naming a refused setting by {@code property}. */
	static <T> T named(UnaryOperator<String> property, Supplier<T> build) {
		try {
			return build.get();
		}
		catch (InvalidSettingException ex) {
			throw new InvalidConfigurationPropertyValueException(property.apply(ex.setting()), ex.value(), ex.rule());
		}
	}

	/**
	 * A map entry keyed by a size, as in {@code gpumem.device-pool.warm[4KB]}, spelt as the environment
	 * sets it ({@code warm.4KB} in YAML, {@code warm[4096]}), so that its origin can be found; the property
	 * as given when it is no such entry or the environment does not set it.
	 */
	static String sizeKeyed(Environment environment, String property) {
		int open = property.indexOf('[');
		if (open < 0 || !property.endsWith("]")) {
			return property;
		}
		ConfigurationPropertyName map = ConfigurationPropertyName.of(property.substring(0, open));
		DataSize key = DataSize.parse(property.substring(open + 1, property.length() - 1));
		for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
			if (source instanceof IterableConfigurationPropertySource names) {
				for (ConfigurationPropertyName name : names) {
					if (map.isParentOf(name) && key.equals(sizeOf(name.getLastElement(Form.ORIGINAL)))) {
						return name.toString();
					}
				}
			}
		}
		return property;
	}

	private static DataSize sizeOf(String key) {
		try {
			return DataSize.parse(key);
		}
		catch (IllegalArgumentException ex) {
			return null;
		}
	}

}
