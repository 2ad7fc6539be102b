package io.gpumem.sample.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.CommandLinePropertySource;
import org.springframework.core.env.PropertySource;

import io.gpumem.sample.SampleApplication;

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

	/**
	 * The sample as the docs' examples run against it, started with a page's {@code arguments} and, where not
	 * null, an {@code example} of application properties: on the host backend unless the arguments name one
	 * (arguments outrank the example, as on a command line), on a free port.
	 */
	static ConfigurableApplicationContext startSample(List<String> arguments, PropertySource<?> example) {
		List<String> args = new ArrayList<>(arguments);
		if (args.stream().noneMatch((arg) -> arg.startsWith("--gpumem.backend="))) {
			args.add("--gpumem.backend=host");
		}
		args.add("--server.port=0");
		SpringApplicationBuilder sample = new SpringApplicationBuilder(SampleApplication.class);
		if (example != null) {
			sample.initializers((context) -> context.getEnvironment()
				.getPropertySources()
				.addAfter(CommandLinePropertySource.COMMAND_LINE_PROPERTY_SOURCE_NAME, example));
		}
		return sample.run(args.toArray(String[]::new));
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
