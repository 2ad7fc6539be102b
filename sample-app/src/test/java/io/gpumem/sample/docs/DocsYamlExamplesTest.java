package io.gpumem.sample.docs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample starts on the host backend with every {@code application.yml} example of the README and the docs
 * (a YAML block whose first line is a comment is another file, such as {@code prometheus.yml}): so that a user
 * who copies one gets what the page says, not a misspelt key or a value that stops startup ({@code gpumem.*}
 * binds no unknown field).
 */
class DocsYamlExamplesTest {

	@TestFactory
	Stream<DynamicTest> everyApplicationYamlExampleStartsTheSample() {
		List<DynamicTest> tests = new ArrayList<>();
		for (Path page : DocPages.all()) {
			for (DocPages.Block block : DocPages.blocks(page)) {
				String yaml = String.join("\n", block.lines());
				if (block.language().matches("ya?ml") && !yaml.startsWith("# ")) {
					tests.add(DynamicTest.dynamicTest(block.where(0), () -> check(block, yaml)));
				}
			}
		}
		assertThat(tests).isNotEmpty();
		return tests.stream();
	}

	private static void check(DocPages.Block block, String yaml) throws IOException {
		PropertySource<?> source = new YamlPropertySourceLoader()
			.load(block.where(0), new ByteArrayResource(yaml.getBytes(StandardCharsets.UTF_8))).get(0);
		try (ConfigurableApplicationContext sample = DocPages.startSample(List.of(), source)) {
			assertThat(sample.isActive()).isTrue();
		}
	}

}
