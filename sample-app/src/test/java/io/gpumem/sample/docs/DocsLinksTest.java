package io.gpumem.sample.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README stays short and leads to every page of the docs, and no page links to a file or heading that is not
 * there.
 */
class DocsLinksTest {

	private static final Path README = DocPages.ROOT.resolve("README.md");

	@Test
	void theReadmeIsShortAndLinksEveryPage() {
		assertThat(DocPages.read(README)).hasSizeLessThanOrEqualTo(150);
		List<String> linked = DocPages.links(README).stream().map(DocPages.Link::destination).toList();
		assertThat(DocPages.all()).filteredOn((page) -> !page.equals(README))
			.allSatisfy((page) -> assertThat(linked).contains("docs/" + page.getFileName()));
	}

	@Test
	void everyRelativeLinkFindsItsFileAndHeading() {
		List<String> broken = new ArrayList<>();
		for (Path page : allWithDecisions()) {
			for (DocPages.Link link : DocPages.links(page)) {
				String destination = link.destination();
				if (destination.matches("[a-z]+:.*")) {
					continue;
				}
				int hash = destination.indexOf('#');
				String file = (hash < 0) ? destination : destination.substring(0, hash);
				Path target = file.isEmpty() ? page : page.resolveSibling(file).normalize();
				String where = DocPages.name(page) + ":" + link.line() + ": ";
				if (!Files.exists(target)) {
					broken.add(where + file + " is missing");
				}
				else if (hash >= 0 && !DocPages.anchors(target).contains(destination.substring(hash + 1))) {
					broken.add(where + file + " has no heading #" + destination.substring(hash + 1));
				}
			}
		}
		assertThat(broken).isEmpty();
	}

	/** Every page, and the decision records under {@code docs/decisions/}. */
	private static List<Path> allWithDecisions() {
		List<Path> pages = new ArrayList<>(DocPages.all());
		try (Stream<Path> decisions = Files.list(DocPages.ROOT.resolve("docs/decisions"))) {
			decisions.filter((page) -> page.toString().endsWith(".md")).sorted().forEach(pages::add);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return pages;
	}

}
