package io.gpumem.verification;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import io.gpumem.benchmarks.TraceReplay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The allocator comparison's parts off the GPU: the Python replay's own tests, and one trace replayed by gpumem's
 * {@code TraceReplay} on the host backend and by the Python script's stand-in allocator, so that both read the same
 * format and the report holds both.
 */
class TraceReplayScriptTest {

	private static final Path PYTHON = Path.of("src/main/python").toAbsolutePath();

	@BeforeAll
	static void python3IsThere() throws Exception {
		boolean found;
		try {
			found = new ProcessBuilder("python3", "--version").start().waitFor() == 0;
		}
		catch (IOException ex) {
			found = false;
		}
		assumeTrue(found, "python3 is not on the PATH; .ci/run installs it");
	}

	@Test
	void thePythonReplaysOwnTestsPass(@TempDir Path temp) throws Exception {
		Path log = temp.resolve("unittest.log");
		assertThat(run(PYTHON, log, "python3", "-B", "-m", "unittest", "test_trace_replay")).as("%s", Files.readString(log))
			.isZero();
		assertThat(log).content().contains("OK");
	}

	@Test
	void javaAndPythonReplayTheSameTracesAndTheReportShowsBoth(@TempDir Path temp) throws Exception {
		Path traces = temp.resolve("traces");
		TraceReplay.run(new String[] { "schedule", "--shapes", "uniform,sample", "--workers", "8", "--requests", "300",
				"--dir", traces.toString() });
		Path records = temp.resolve("records.jsonl");
		Path uniform = traces.resolve("service-uniform-8.trace");
		Path sample = traces.resolve("service-sample-8.trace");
		TraceReplay.run(new String[] { "replay", "--backend", "host", "--lenders", "gpumem,gpumem-fixed", "--out",
				records.toString(), uniform.toString(), sample.toString() });
		Path log = temp.resolve("python.log");
		assertThat(run(temp, log, "python3", "-B", PYTHON.resolve("trace_replay.py").toString(), "replay",
				"--allocators", "stand-in", "--trace", uniform.toString(), "--trace", sample.toString(), "--out",
				records.toString())).as("%s", Files.readString(log)).isZero();
		Path report = temp.resolve("report.md");
		assertThat(run(temp, log, "python3", "-B", PYTHON.resolve("trace_replay.py").toString(), "report", "--in",
				records.toString(), "--out", report.toString())).as("%s", Files.readString(log)).isZero();

		List<JsonNode> written = new ArrayList<>();
		for (String line : Files.readAllLines(records)) {
			written.add(JsonMapper.shared().readTree(line));
		}
		assertThat(written).extracting((record) -> record.get("trace").asString() + " " + record.get("allocator").asString())
			.containsExactlyInAnyOrder("service-uniform-8 gpumem", "service-uniform-8 gpumem-fixed",
					"service-uniform-8 stand-in", "service-sample-8 gpumem", "service-sample-8 gpumem-fixed",
					"service-sample-8 stand-in");
		for (String trace : List.of("service-uniform-8", "service-sample-8")) {
			List<JsonNode> ofTrace = written.stream().filter((record) -> record.get("trace").asString().equals(trace))
				.toList();
			assertThat(ofTrace).extracting((record) -> record.get("peakLentBytes").asLong())
				.as("Java and Python read the same peak lent").containsOnly(ofTrace.get(0).get("peakLentBytes").asLong());
			assertThat(ofTrace).extracting((record) -> record.get("acquires").asLong())
				.containsOnly(ofTrace.get(0).get("acquires").asLong());
			assertThat(ofTrace).allSatisfy((record) -> assertThat(record.get("peakReservedBytes").asLong())
				.isGreaterThanOrEqualTo(record.get("peakLentBytes").asLong()));
		}
		assertThat(report).content().contains("service-uniform-8", "service-sample-8", "| gpumem |", "| gpumem-fixed |",
				"| stand-in |");
	}

	private static int run(Path directory, Path log, String... command) throws IOException, InterruptedException {
		Process process = new ProcessBuilder(command).directory(directory.toFile())
			.redirectErrorStream(true)
			.redirectOutput(log.toFile())
			.start();
		if (!process.waitFor(2, TimeUnit.MINUTES)) {
			process.destroyForcibly();
			throw new AssertionError(String.join(" ", command) + " did not end within 2 minutes");
		}
		return process.exitValue();
	}

}
