package io.gpumem.autoconfigure;

import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;

import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.BindException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The configuration reference is true: docs/configuration.md lists every property as the metadata describes it,
 * and every default the metadata states is the one the code applies.
 */
class ConfigurationReferenceTest {

	@Test
	void thePageListsEveryPropertyAsTheMetadataDescribesIt() throws IOException {
		String onPage = ConfigurationReference.section(Files.readString(ConfigurationReference.page()));
		List<String> differences = ConfigurationReference.differences(onPage,
				ConfigurationReference.table(ConfigurationReference.properties()));
		assertThat(differences)
			.withFailMessage(() -> "docs/configuration.md's table differs from the configuration metadata:\n  "
					+ String.join("\n  ", differences) + "\nRegenerate it with\n  " + ConfigurationReference.COMMAND)
			.isEmpty();
	}

	@Test
	void everyStatedDefaultBindsAsItsPropertysTypeToWhatBindingNothingGives() throws IOException {
		SoftAssertions softly = new SoftAssertions();
		for (ConfigurationReference.Property property : ConfigurationReference.properties()) {
			String name = property.name();
			String stated = property.defaultValue();
			Object unset = ConfigurationReference.bound(name, Map.of());
			if (stated != null) {
				softly.assertThat(boundFrom(name, stated))
					.as("%s bound from its metadata default '%s'", name, stated)
					.isNotNull()
					.isEqualTo(unset);
			}
			else {
				softly.assertThat(unset).as("%s's default, which the metadata does not state", name).isNull();
			}
		}
		softly.assertAll();
	}

	private static Object boundFrom(String name, String value) {
		try {
			return ConfigurationReference.bound(name, Map.of(name, value));
		}
		catch (BindException ex) {
			return null;
		}
	}

}
