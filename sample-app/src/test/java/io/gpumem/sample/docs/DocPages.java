package io.gpumem.sample.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.commonmark.ext.heading.anchor.IdGenerator;
import org.commonmark.node.AbstractVisitor;
import org.commonmark.node.Code;
import org.commonmark.node.FencedCodeBlock;
import org.commonmark.node.Heading;
import org.commonmark.node.Node;
import org.commonmark.node.Text;
import org.commonmark.parser.IncludeSourceSpans;
import org.commonmark.parser.Parser;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.CommandLinePropertySource;
import org.springframework.core.env.PropertySource;

import io.gpumem.sample.SampleApplication;

/** The README and the pages under {@code docs/}, read as the fenced code blocks they hold. */
final class DocPages {

	static final Path ROOT = Path.of("..");

	private static final Parser PARSER = Parser.builder()
		.includeSourceSpans(IncludeSourceSpans.BLOCKS_AND_INLINES)
		.build();

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

	/** The fenced code blocks of a page, in order, as a CommonMark renderer finds them. */
	static List<Block> blocks(Path page) {
		List<Block> blocks = new ArrayList<>();
		parse(page).accept(new AbstractVisitor() {

			@Override
			public void visit(FencedCodeBlock code) {
				int fence = code.getSourceSpans().get(0).getLineIndex();
				blocks.add(new Block(page, code.getInfo().trim(), fence + 2, code.getLiteral().lines().toList()));
			}

		});
		return blocks;
	}

	/** The links of a page, in order, with the line each starts on. */
	static List<Link> links(Path page) {
		List<Link> links = new ArrayList<>();
		parse(page).accept(new AbstractVisitor() {

			@Override
			public void visit(org.commonmark.node.Link link) {
				links.add(new Link(link.getDestination(), link.getSourceSpans().get(0).getLineIndex() + 1));
				visitChildren(link);
			}

		});
		return links;
	}

	/**
	 * The anchors a renderer gives a page's headings, as CommonMark's heading-anchor extension makes them: lower
	 * case, words joined by hyphens, a repeated heading's numbered.
	 */
	static List<String> anchors(Path page) {
		IdGenerator ids = IdGenerator.builder().build();
		List<String> anchors = new ArrayList<>();
		parse(page).accept(new AbstractVisitor() {

			@Override
			public void visit(Heading heading) {
				StringBuilder text = new StringBuilder();
				heading.accept(new AbstractVisitor() {

					@Override
					public void visit(Text literal) {
						text.append(literal.getLiteral());
					}

					@Override
					public void visit(Code code) {
						text.append(code.getLiteral());
					}

				});
				anchors.add(ids.generateId(text.toString()));
			}

		});
		return anchors;
	}

	private static Node parse(Path page) {
		return PARSER.parse(String.join("\n", read(page)));
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

	/** A link: where it leads, and the line of the page it starts on. */
	record Link(String destination, int line) {

	}

	/** A fenced code block: its language, the line of the page its first line is on, and its lines. */
	record Block(Path page, String language, int firstLine, List<String> lines) {

		String where(int index) {
			return name(this.page) + ":" + (this.firstLine + index);
		}

	}

}
