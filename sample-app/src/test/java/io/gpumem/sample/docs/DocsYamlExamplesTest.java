package io.gpumem.sample.docs;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;

import io.gpumem.sample.SampleApplication;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every {@code application.yml} example of the README and the docs names only properties the starter's
 * metadata knows, and the sample starts with it on the host backend: so that a user who copies one gets what
 * the page says, not a key Boot ignores or a value that stops startup.
 */
class DocsYamlExamplesTest {

	@TestFactory
	Stream<DynamicTest> everyApplicationYamlExampleStartsTheSample() throws IOException {
		List<String> properties = metadataProperties();
		List<DynamicTest> tests = new ArrayList<>();
		for (Path page : DocPages.all()) {
			for (DocPages.Block block : DocPages.blocks(page)) {
				String yaml = String.join("\n", block.lines());
				if (block.language().equals("yaml") && (yaml.startsWith("gpumem:") || yaml.startsWith("management:"))) {
					tests.add(DynamicTest.dynamicTest(block.where(0), () -> check(block, yaml, properties)));
				}
			}
		}
		assertThat(tests).isNotEmpty();
		return tests.stream();
	}

	private static void check(DocPages.Block block, String yaml, List<String> properties) throws IOException {
		List<PropertySource<?>> sources = new YamlPropertySourceLoader().load(block.where(0),
				new ByteArrayResource(yaml.getBytes()));
		EnumerablePropertySource<?> source = (EnumerablePropertySource<?>) sources.get(0);
		List<String> unknown = Stream.of(source.getPropertyNames())
			.filter((name) -> name.startsWith("gpumem.") && !known(name, properties))
			.toList();
		assertThat(unknown).as("gpumem properties of %s that the metadata does not know", block.where(0)).isEmpty();
		try (ConfigurableApplicationContext sample = new SpringApplicationBuilder(SampleApplication.class)
			.properties("gpumem.backend=host", "server.port=0")
			.initializers((context) -> context.getEnvironment().getPropertySources().addFirst(source))
			.run()) {
			assertThat(sample.isActive()).isTrue();
		}
	}

	/** A property the metadata names, an element of a list it names, or a key of a map it names. */
	private static boolean known(String name, List<String> properties) {
		String path = name.replaceAll("\\[\\d+]$", "");
		return properties.stream().anyMatch((property) -> path.equals(property)
				|| (property.endsWith(".*") && path.startsWith(property.substring(0, property.length() - 1))));
	}

	/** The gpumem properties of the configuration metadata on the class path, maps as {@code name.*}. */
	private static List<String> metadataProperties() throws IOException {
		List<String> names = new ArrayList<>();
		ObjectMapper json = new ObjectMapper();
		for (URL url : Collections.list(DocsYamlExamplesTest.class.getClassLoader()
			.getResources("META-INF/spring-configuration-metadata.json"))) {
			try (InputStream in = url.openStream()) {
				for (JsonNode property : json.readTree(in).path("properties")) {
					String name = property.path("name").asString();
					if (name.startsWith("gpumem.")) {
						names.add(property.path("type").asString().startsWith("java.util.Map") ? name + ".*" : name);
					}
				}
			}
		}
		assertThat(names).isNotEmpty();
		return names;
	}

}
