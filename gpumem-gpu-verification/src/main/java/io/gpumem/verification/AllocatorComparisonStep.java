package io.gpumem.verification;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import io.gpumem.verification.StepResult.Status;

/**
 * gpumem's pool beside the allocators a GPU engineer knows, on the same traces and the same GPU: each trace (the
 * service workload's schedules, uniform and the sample's shapes at 64 and 200 workers, and the sample's device pool
 * under mixed load, carried in {@code tools/traces}) replayed step by step against gpumem over expandable and fixed
 * segments ({@code TraceReplay}), and against PyTorch's caching allocator with expandable segments off and on,
 * CuPy's memory pool and CUDA's stream-ordered pool ({@code tools/python/trace_replay.py}); then the alloc+free
 * latency of a pool hit, {@code cuMemAlloc} and {@code cuMemAllocAsync} ({@code GpuComparison}) beside PyTorch's
 * allocator and CUDA's, timed in C++. Writes {@code allocators.md} (the tables), {@code allocators.jsonl} (every
 * record) and {@code allocators.log}. Without a CUDA device it replays the traces, shortened, on the host backend
 * and against the Python script's stand-in allocator, so that the path stays working.
 */
final class AllocatorComparisonStep {

	static final String NAME = "allocator comparison";

	private static final String TRACE_REPLAY = "io.gpumem.benchmarks.TraceReplay";

	private static final String SCRIPT = "tools/python/trace_replay.py";

	private static final List<String> PYTHON_ALLOCATORS = List.of("torch", "torch-expandable", "cupy", "cuda-async");

	private static final String SIZES = "1024,65536,1048576,16777216,67108864";

	/** How long the script gives each allocator's process, which imports its library and replays every trace. */
	private static final long REPLAY_SECONDS_EACH = 100;

	/** How long the script gives each latency process, which builds the C++ extension first (about 20 s). */
	private static final long LATENCY_SECONDS_EACH = 200;

	/** The names the report gives {@code GpuComparison}'s benchmarks. */
	private static final Map<String, String> JMH_NAMES = Map.of("gpumemPoolHit", "gpumem hit", "cuMemAllocFree",
			"cuMemAlloc+cuMemFree (JCuda)", "cuMemAllocFreeAsync", "cuMemAllocAsync+cuMemFreeAsync (JCuda)");

	private AllocatorComparisonStep() {
	}

	/**
	 * Runs the comparison; {@code measured}, where not null, holds {@code GpuComparison}'s results from the benchmarks
	 * step of this verification, which it takes rather than measuring the same again.
	 */
	static StepResult run(Bundle bundle, boolean gpu, long timeoutSeconds, Path measured) throws Exception {
		long start = System.nanoTime();
		Path log = bundle.out().resolve("allocators.log");
		Path records = bundle.out().resolve("allocators.jsonl");
		Files.deleteIfExists(records);
		Path traces = Files.createDirectories(bundle.work().resolve("traces"));
		try (Stream<Path> carried = Files.list(bundle.root().resolve("tools/traces"))) {
			for (Path trace : carried.toList()) {
				Files.copy(trace, traces.resolve(trace.getFileName()));
			}
		}
		Map<String, Object> details = new LinkedHashMap<>();
		List<String> failures = new ArrayList<>();
		java(bundle, List.of("schedule", "--shapes", "uniform,sample", "--workers", "64,200", "--requests",
				gpu ? "20000" : "2000", "--dir", traces.toString()), log, timeoutSeconds, failures);
		List<String> traceFiles;
		try (Stream<Path> files = Files.list(traces)) {
			traceFiles = files.map(Path::toString).filter((name) -> name.endsWith(".trace")).sorted().toList();
		}
		details.put("traces", traceFiles.stream().map((name) -> Path.of(name).getFileName().toString()).toList());

		List<String> replay = new ArrayList<>(List.of("replay", "--backend", gpu ? "cuda" : "host", "--lenders",
				"gpumem,gpumem-fixed", "--out", records.toString()));
		replay.addAll(traceFiles);
		java(bundle, replay, log, timeoutSeconds, failures);

		List<String> allocators = gpu ? PYTHON_ALLOCATORS : List.of("stand-in");
		List<String> python = new ArrayList<>(List.of("replay", "--allocators", String.join(",", allocators),
				"--timeout", Long.toString(REPLAY_SECONDS_EACH), "--out", records.toString()));
		traceFiles.forEach((trace) -> python.addAll(List.of("--trace", trace)));
		python(bundle, python, log, allocators.size() * REPLAY_SECONDS_EACH + 30, failures);

		if (gpu) {
			latencyOfGpuComparison(bundle, measured, records, log, timeoutSeconds, failures);
			python(bundle, List.of("latency", "--allocators", "torch,torch-expandable", "--sizes", SIZES, "--timeout",
					Long.toString(LATENCY_SECONDS_EACH), "--build-dir", bundle.work().resolve("extension").toString(),
					"--out", records.toString()), log, 2 * LATENCY_SECONDS_EACH + 30, failures);
		}
		Path report = bundle.out().resolve("allocators.md");
		python(bundle, List.of("report", "--in", records.toString(), "--out", report.toString()), log, timeoutSeconds,
				failures);

		List<JsonNode> written = new ArrayList<>();
		if (Files.exists(records)) {
			for (String line : Files.readAllLines(records)) {
				written.add(JsonMapper.shared().readTree(line));
			}
		}
		written.stream().filter((record) -> record.has("error"))
			.forEach((record) -> failures.add(record.path("allocator").asString() + ": " + record.get("error").asString()));
		details.put("records", written);
		details.put("failures", failures);
		if (!failures.isEmpty()) {
			return new StepResult(NAME, Status.FAILED, failures.size() + " part(s) failed, the first: " + failures.get(0)
					+ "; see allocators.log", EnvironmentStep.seconds(start), details);
		}
		long replays = written.stream().filter((record) -> record.has("peakReservedBytes")).count();
		return new StepResult(NAME, gpu ? Status.PASSED : Status.NO_GPU, replays + " replays of " + traceFiles.size()
				+ " traces" + (gpu ? " and the latency of each allocator" : " on the host backend and the stand-in")
				+ "; tables in allocators.md", EnvironmentStep.seconds(start), details);
	}

	/**
	 * Appends {@code GpuComparison}'s figures as latency records: those {@code measured} holds, or else those of a
	 * brief run made here.
	 */
	private static void latencyOfGpuComparison(Bundle bundle, Path measured, Path records, Path log,
			long timeoutSeconds, List<String> failures) throws IOException, InterruptedException {
		Path json = measured;
		if (json == null) {
			json = bundle.work().resolve("gpu-comparison.json");
			List<String> arguments = new ArrayList<>(BenchmarksStep.BRIEF);
			arguments.addAll(List.of("-rf", "json", "-rff", json.toString()));
			int exit = JavaProcess.run(bundle.root(), bundle.toolsClassPath(), BenchmarksStep.GPU_COMPARISON,
					arguments, log, timeoutSeconds);
			if (exit != 0 || !Files.exists(json)) {
				failures.add("GpuComparison " + JavaProcess.ending(exit, timeoutSeconds));
				return;
			}
		}
		StringBuilder lines = new StringBuilder();
		BenchmarksStep.nanosBySize(json).forEach((size, nanos) -> nanos.forEach((benchmark, nanosPerPair) -> {
			Map<String, Object> record = new LinkedHashMap<>();
			record.put("allocator", JMH_NAMES.getOrDefault(benchmark, benchmark));
			record.put("bytes", Long.parseLong(size));
			record.put("nanosPerPair", nanosPerPair);
			record.put("from", "JMH");
			lines.append(JsonMapper.shared().writeValueAsString(record)).append('\n');
		}));
		Files.writeString(records, lines, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
	}

	private static void java(Bundle bundle, List<String> arguments, Path log, long timeoutSeconds,
			List<String> failures) throws IOException, InterruptedException {
		int exit = JavaProcess.run(bundle.root(), bundle.toolsClassPath(), TRACE_REPLAY, arguments, log,
				timeoutSeconds);
		if (exit != 0) {
			failures.add("TraceReplay " + arguments.get(0) + " " + JavaProcess.ending(exit, timeoutSeconds));
		}
	}

	private static void python(Bundle bundle, List<String> arguments, Path log, long timeoutSeconds,
			List<String> failures) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>(List.of("python3", SCRIPT));
		command.addAll(arguments);
		try {
			int exit = JavaProcess.run(bundle.root(), command, log, timeoutSeconds);
			if (exit != 0) {
				failures.add("trace_replay.py " + arguments.get(0) + " " + JavaProcess.ending(exit, timeoutSeconds));
			}
		}
		catch (IOException ex) {
			failures.add("python3 could not be started: " + ex.getMessage());
		}
	}

}
