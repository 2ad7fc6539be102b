package io.gpumem.sample;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The packaged sample, as {@code java -jar} runs it on the JDK that runs the build, its backend chosen by the CUDA
 * probe that loads JCuda's natives: it starts and stops with no warning, which on Java 24 and later would be the
 * JVM's about restricted native access or {@code sun.misc.Unsafe}.
 */
class PackagedSampleIT {

	@Test
	void thePackagedSampleStartsAndStopsWithoutAWarning() throws Exception {
		String java = ProcessHandle.current().info().command().orElseThrow();
		Process process = new ProcessBuilder(java, "-jar", packagedJar().toString(), "--server.port=0",
				"--management.server.port=0")
			.redirectErrorStream(true)
			.start();
		List<String> lines = new CopyOnWriteArrayList<>();
		Thread reader = new Thread(() -> read(process, lines), "sample-output");
		reader.start();
		try {
			await("the sample started").atMost(Duration.ofMinutes(2))
				.until(() -> !process.isAlive() || lines.stream().anyMatch((line) -> line.contains("Started ")));
			assertThat(process.isAlive()).as("the sample runs:%n%s", String.join("\n", lines)).isTrue();
		}
		finally {
			process.toHandle().destroy();
			assertThat(process.waitFor(1, TimeUnit.MINUTES)).as("the sample stops on SIGTERM").isTrue();
			reader.join();
		}
		assertThat(lines).as("the sample's output on Java %s", Runtime.version())
			.anyMatch((line) -> line.contains("Started "))
			.noneMatch((line) -> line.contains("WARN"));
	}

	private static Path packagedJar() throws IOException {
		try (Stream<Path> files = Files.list(Path.of("target"))) {
			return files.filter((file) -> file.getFileName().toString().matches("sample-app-[^-]+(-SNAPSHOT)?\\.jar"))
				.findFirst()
				.orElseThrow(() -> new IllegalStateException("no packaged sample in target/: run mvn package"));
		}
	}

	private static void read(Process process, List<String> lines) {
		try (BufferedReader output = new BufferedReader(
				new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
			output.lines().forEach(lines::add);
		}
		catch (IOException | UncheckedIOException ex) {
			lines.add("could not read the output: " + ex);
		}
	}

}
