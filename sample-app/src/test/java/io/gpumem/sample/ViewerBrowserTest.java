package io.gpumem.sample;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.gpumem.autoconfigure.GpumemPools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * The memory viewer ({@code ops/viewer/gpumem-viewer.html}, served by the sample) in a real headless Chromium:
 * after requests, it loads the sample's snapshots and history from {@code ?src=}, draws each pool and every
 * segment, and reports no error, on the page or on the console. Skipped where Chromium is not installed, unless
 * {@code GPUMEM_BROWSER_TESTS=required} (as {@code .ci/run} sets it, after installing Debian's chromium).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=host", "gpumem.history.buffers=all" })
class ViewerBrowserTest {

	/** Chromium on the PATH, as {@code scripts/require-command.sh} installs it; null where there is none. */
	private static final Path CHROMIUM = Stream.of(System.getenv("PATH").split(File.pathSeparator))
		.map((directory) -> Path.of(directory, "chromium"))
		.filter(Files::isExecutable)
		.findFirst()
		.orElse(null);

	private static final Pattern ERRORS = Pattern.compile("<div id=\"errors\">([^<]*)</div>");

	@LocalServerPort
	private int port;

	@Autowired
	private GpumemPools pools;

	@Test
	void theViewerDrawsTheSamplesPoolsAndTheirSegmentsWithoutAnError(@TempDir Path work) throws Exception {
		boolean required = "required".equals(System.getenv("GPUMEM_BROWSER_TESTS"));
		assumeThat(required || CHROMIUM != null).as("Chromium is not on the PATH (Debian: apt-get install chromium)")
			.isTrue();
		assertThat(CHROMIUM).as("chromium on the PATH, which GPUMEM_BROWSER_TESTS=required asks for").isNotNull();
		SampleContract contract = new SampleContract(URI.create("http://localhost:" + this.port), 7);
		contract.addAndSaxpy();
		contract.concurrentClients(2, 3);
		String page = "http://localhost:" + this.port + "/gpumem-viewer.html?src=/actuator/gpumem/device/snapshot"
				+ "&src=/actuator/gpumem/device/history&src=/actuator/gpumem/pinned/snapshot";
		Browser run = chromium(work, "--dump-dom", page);
		long segments = Stream.of("device", "pinned")
			.mapToLong((name) -> this.pools.get(name).snapshot().orElseThrow().segments().size())
			.sum();
		assertThat(run.output()).contains("data-loaded=\"3\"", "data-pool=\"device\"", "data-pool=\"pinned\"",
				"class=\"history\"");
		assertThat(count(run.output(), "class=\"segment\"")).as("a row per segment of both pools").isEqualTo(segments);
		Matcher errors = ERRORS.matcher(run.output());
		assertThat(errors.find()).as("the page's error panel").isTrue();
		assertThat(errors.group(1)).as("errors the page reported").isEmpty();
		assertThat(run.log()).as("console messages").noneMatch((line) -> line.contains("CONSOLE"));
		Path screenshot = Path.of("target", "viewer.png").toAbsolutePath();
		chromium(work, "--window-size=1280,900", "--screenshot=" + screenshot, page + "&colour=site");
		assertThat(screenshot).isNotEmptyFile();
	}

	private static long count(String text, String part) {
		return Pattern.compile(Pattern.quote(part)).matcher(text).results().count();
	}

	/**
	 * Runs headless Chromium on {@code arguments}, with the flags this closed network needs and its profile and
	 * log in {@code work}, for its output and log; stopped if it runs past a minute.
	 */
	private static Browser chromium(Path work, String... arguments) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>(List.of(CHROMIUM.toString(), "--headless", "--no-sandbox",
				"--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
				"--disable-component-update", "--disable-sync", "--user-data-dir=" + work.resolve("profile"),
				"--enable-logging=stderr", "--v=1", "--virtual-time-budget=10000"));
		command.addAll(List.of(arguments));
		Path log = work.resolve("chromium.log");
		Process process = new ProcessBuilder(command).redirectError(log.toFile()).start();
		try {
			CompletableFuture<byte[]> output = CompletableFuture.supplyAsync(() -> read(process));
			assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("chromium ended").isTrue();
			assertThat(process.exitValue()).as("chromium's exit status").isZero();
			return new Browser(new String(output.join(), StandardCharsets.UTF_8), Files.readAllLines(log));
		}
		finally {
			process.destroyForcibly();
		}
	}

	private static byte[] read(Process process) {
		try {
			return process.getInputStream().readAllBytes();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private record Browser(String output, List<String> log) {
	}

}
