package io.gpumem.sample.docs;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README stays short and leads to every page of the docs, and no page links to a file or heading that is not
 * there.
 */
class DocsLinksTest {

	private static final Pattern LINK = Pattern.compile("\\]\\(([^)#\\s]*)(?:#([^)\\s]+))?\\)");

	private static final Path README = DocPages.ROOT.resolve("README.md");

	@Test
	void theReadmeIsShortAndLinksEveryPage() {
		List<String> lines = DocPages.read(README);
		String readme = String.join("\n", lines);

		assertThat(lines).hasSizeLessThanOrEqualTo(150);
		assertThat(DocPages.all()).filteredOn((page) -> !page.equals(README))
			.allSatisfy((page) -> assertThat(readme).contains("](docs/" + page.getFileName() + ")"));
	}

	@Test
	void everyRelativeLinkFindsItsFileAndHeading() {
		List<String> broken = new ArrayList<>();
		for (Path page : DocPages.all()) {
			List<String> lines = DocPages.read(page);
			for (int i = 0; i < lines.size(); i++) {
				Matcher link = LINK.matcher(lines.get(i));
				while (link.find()) {
					String file = link.group(1);
					if (file.startsWith("http")) {
						continue;
					}
					Path target = file.isEmpty() ? page : page.resolveSibling(file).normalize();
					if (!Files.exists(target)) {
						broken.add(DocPages.name(page) + ":" + (i + 1) + ": " + file + " is missing");
					}
					else if (link.group(2) != null && !anchors(target).contains(link.group(2))) {
						broken.add(DocPages.name(page) + ":" + (i + 1) + ": " + file + " has no heading #"
								+ link.group(2));
					}
				}
			}
		}
		assertThat(broken).isEmpty();
	}

	/** The anchors a Markdown renderer gives a page's headings: lower case, words joined by hyphens. */
	private static List<String> anchors(Path page) {
		List<String> code = DocPages.blocks(page).stream().flatMap((block) -> block.lines().stream()).toList();
		return DocPages.read(page).stream().filter((line) -> line.startsWith("#") && !code.contains(line))
			.map((line) -> line.replaceFirst("^#+\\s*", "").toLowerCase(Locale.ROOT)
				.replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-'))
			.toList();
	}

}
