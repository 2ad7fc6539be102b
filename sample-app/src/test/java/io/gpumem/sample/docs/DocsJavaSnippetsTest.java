package io.gpumem.sample.docs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every Java snippet of the README and the docs is a tagged region ({@code // tag::name[]} to
 * {@code // end::name[]}) of a source in {@code io.gpumem.docs.examples} (outside the sample's component scan),
 * which the build compiles and tests run, and every region is shown on a page: so that the docs cannot drift
 * from the API.
 */
class DocsJavaSnippetsTest {

	private static final Path EXAMPLES = Path.of("src/test/java/io/gpumem/docs/examples");

	private static final Pattern TAG = Pattern.compile("\\s*// tag::([\\w-]+)\\[\\]");

	@Test
	void everySnippetIsACompiledExampleAndEveryExampleIsShown() throws IOException {
		Map<String, String> regions = regions();
		List<String> strays = new ArrayList<>();
		List<String> shown = new ArrayList<>();
		for (Path page : DocPages.all()) {
			for (DocPages.Block block : DocPages.blocks(page)) {
				if (!block.language().equals("java")) {
					continue;
				}
				String snippet = dedent(block.lines());
				List<String> tags = regions.entrySet().stream().filter((region) -> region.getValue().equals(snippet))
					.map(Map.Entry::getKey).toList();
				if (tags.isEmpty()) {
					strays.add(block.where(0) + " (" + block.lines().get(0).trim() + " ...)");
				}
				shown.addAll(tags);
			}
		}
		assertThat(strays).as("Java snippets of the docs that no region of %s holds as written", EXAMPLES).isEmpty();
		assertThat(shown).as("the regions of %s the docs show", EXAMPLES).containsAll(regions.keySet());
	}

	/** Each tagged region of the examples, by file and tag, without its common indentation. */
	private static Map<String, String> regions() throws IOException {
		Map<String, String> regions = new LinkedHashMap<>();
		try (Stream<Path> files = Files.list(EXAMPLES)) {
			for (Path file : files.sorted().toList()) {
				List<String> lines = DocPages.read(file);
				for (int i = 0; i < lines.size(); i++) {
					Matcher tag = TAG.matcher(lines.get(i));
					if (tag.matches()) {
						int end = lines.indexOf(lines.get(i).replace("tag::", "end::"));
						assertThat(end).as("the end of %s in %s", tag.group(1), file).isGreaterThan(i);
						regions.put(file.getFileName() + "#" + tag.group(1), dedent(lines.subList(i + 1, end)));
					}
				}
			}
		}
		assertThat(regions).isNotEmpty();
		return regions;
	}

	private static String dedent(List<String> lines) {
		int indent = lines.stream().filter((line) -> !line.isBlank())
			.mapToInt((line) -> line.length() - line.stripLeading().length()).min().orElse(0);
		StringBuilder text = new StringBuilder();
		for (String line : lines) {
			text.append(line.isBlank() ? "" : line.substring(indent).stripTrailing()).append('\n');
		}
		return text.toString();
	}

}
