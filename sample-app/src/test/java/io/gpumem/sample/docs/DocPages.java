package io.gpumem.sample.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** The README and the pages under {@code docs/}, read as the fenced code blocks they hold. */
final class DocPages {

	static final Path ROOT = Path.of("..");

	private DocPages() {
	}

	/** The README first, then every page of {@code docs/} by name. */
	static List<Path> all() {
		List<Path> pages = new ArrayList<>();
		pages.add(ROOT.resolve("README.md"));
		try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
			docs.filter((page) -> page.toString().endsWith(".md")).sorted().forEach(pages::add);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return pages;
	}

	/** The fenced code blocks of a page, in order. */
	static List<Block> blocks(Path page) {
		List<String> lines = read(page);
		List<Block> blocks = new ArrayList<>();
		for (int i = 0; i < lines.size(); i++) {
			String line = lines.get(i);
			if (!line.startsWith("```")) {
				continue;
			}
			String language = line.substring(3).trim();
			int first = i + 1;
			int end = first;
			while (end < lines.size() && !lines.get(end).startsWith("```")) {
				end++;
			}
			blocks.add(new Block(page, language, first + 1, List.copyOf(lines.subList(first, end))));
			i = end;
		}
		return blocks;
	}

	static List<String> read(Path file) {
		try {
			return Files.readAllLines(file);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** Where a page is, as a message names it. */
	static String name(Path page) {
		return ROOT.relativize(page).toString();
	}

	/** A fenced code block: its language, the line of the page its first line is on, and its lines. */
	record Block(Path page, String language, int firstLine, List<String> lines) {

		String where(int index) {
			return name(this.page) + ":" + (this.firstLine + index);
		}

	}

}
