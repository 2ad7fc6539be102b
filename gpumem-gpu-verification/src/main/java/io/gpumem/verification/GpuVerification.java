package io.gpumem.verification;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import tools.jackson.databind.json.JsonMapper;

import io.gpumem.cuda.CudaProbe;
import io.gpumem.cuda.CudaProbeResult;
import io.gpumem.verification.StepResult.Status;

/**
 * Proves the CUDA path on the machine it runs on, from the unpacked GPU bundle: reports the device,
 * driver and CUDA versions, runs every real-driver test, checks every endpoint of the sample service on
 * CUDA against references, runs the GPU benchmarks briefly, and compares gpumem's pool with PyTorch's, CuPy's and
 * CUDA's allocators on the same traces. Where no CUDA device is found it says so,
 * runs the same checks on the host backend, and exits with {@value #NO_GPU}.
 * <p>
 * Writes {@code verify.log} and {@code summary.json} into the output folder, beside each step's own files
 * ({@code tests.log}, {@code tests.xml}, {@code sample.log}, {@code benchmarks.log}, {@code benchmarks.json},
 * {@code service-workload.json}, {@code allocators.md}, {@code allocators.jsonl}, {@code allocators.log}).
 * <pre>{@code java -cp 'app:natives:lib/*:tools/*' io.gpumem.verification.GpuVerification --out DIR \
 *     [--steps tests,sample,benchmarks,allocators]}</pre>
 */
public final class GpuVerification {

	/** Exit code: everything passed on a CUDA device. */
	public static final int PASSED = 0;

	/** Exit code: a step failed. */
	public static final int FAILED = 1;

	/** Exit code: the arguments or the bundle are wrong. */
	public static final int USAGE = 2;

	/** Exit code: no CUDA device here; everything that runs without one passed. */
	public static final int NO_GPU = 77;

	private static final long TESTS_SECONDS = 90;

	private static final long SAMPLE_SECONDS = 60;

	/** For each of the two benchmark programs. */
	private static final long BENCHMARKS_SECONDS = 135;

	/** For each program of the allocator comparison. */
	private static final long ALLOCATORS_SECONDS = 240;

	/** Details too long for the text report, written into the JSON report only. */
	private static final Set<String> JSON_ONLY = Set.of("gpumem", "records");

	/** The steps after the environment's, by the name {@code --steps} takes, in the order they run. */
	private static final List<String> STEPS = List.of("tests", "sample", "benchmarks", "allocators");

	private final Bundle bundle;

	private final PrintStream log;

	private final List<String> steps;

	private GpuVerification(Bundle bundle, PrintStream log, List<String> steps) {
		this.bundle = bundle;
		this.log = log;
		this.steps = steps;
	}

	public static void main(String[] args) {
		System.exit(run(args));
	}

	/**
	 * Runs the verification with {@code --out DIR} (required), {@code --bundle DIR} (default: here) and
	 * {@code --steps NAME,...} (default: all of {@link #STEPS}; the environment's always runs).
	 */
	static int run(String[] args) {
		Map<String, String> options = new LinkedHashMap<>();
		for (int i = 0; i + 1 < args.length; i += 2) {
			options.put(args[i], args[i + 1]);
		}
		List<String> steps = List.of(options.getOrDefault("--steps", String.join(",", STEPS)).split(","));
		if (args.length % 2 != 0 || !options.containsKey("--out")
				|| !List.of("--out", "--bundle", "--steps").containsAll(options.keySet()) || !STEPS.containsAll(steps)) {
			System.err.println("usage: GpuVerification --out DIR [--bundle DIR] [--steps NAME,...], steps of " + STEPS);
			return USAGE;
		}
		Path root = Path.of(options.getOrDefault("--bundle", ".")).toAbsolutePath().normalize();
		if (!Files.isDirectory(root.resolve("tools")) || !Files.isDirectory(root.resolve("app"))) {
			System.err.println(root + " is not an unpacked GPU bundle: it has no tools/ and app/ folders");
			return USAGE;
		}
		try {
			Path out = Files.createDirectories(Path.of(options.get("--out")).toAbsolutePath().normalize());
			Path work = Files.createTempDirectory("gpumem-verification");
			try (PrintStream file = new PrintStream(Files.newOutputStream(out.resolve("verify.log"),
					StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING), true)) {
				return new GpuVerification(new Bundle(root, out, work), new Tee(System.out, file), steps).verify();
			}
		}
		catch (IOException ex) {
			System.err.println("the verification could not write its output: " + ex);
			return USAGE;
		}
	}

	private int verify() throws IOException {
		Instant started = Instant.now();
		this.log.println("gpumem GPU verification, " + started);
		CudaProbeResult probe = CudaProbe.probe(0);
		boolean gpu = probe.usable();
		List<StepResult> steps = new ArrayList<>();
		steps.add(report(EnvironmentStep.run(probe)));
		if (this.steps.contains("tests")) {
			steps.add(report(step("real-driver tests", () -> RealDriverTestsStep.run(this.bundle, gpu, TESTS_SECONDS))));
		}
		if (this.steps.contains("sample")) {
			steps.add(report(step("sample service", () -> SampleServiceStep.run(this.bundle, gpu, SAMPLE_SECONDS))));
		}
		Path measured = null;
		if (this.steps.contains("benchmarks")) {
			StepResult benchmarks = report(step("GPU benchmarks",
					() -> BenchmarksStep.run(this.bundle, gpu, BENCHMARKS_SECONDS)));
			steps.add(benchmarks);
			measured = (benchmarks.status() == Status.PASSED) ? BenchmarksStep.results(this.bundle) : null;
		}
		if (this.steps.contains("allocators")) {
			Path gpuComparison = measured;
			steps.add(report(step(AllocatorComparisonStep.NAME,
					() -> AllocatorComparisonStep.run(this.bundle, gpu, ALLOCATORS_SECONDS, gpuComparison))));
		}
		boolean failed = steps.stream().anyMatch((step) -> step.status() == Status.FAILED);
		int exit = failed ? FAILED : gpu ? PASSED : NO_GPU;
		String result = failed ? "FAILED" : gpu ? "PASSED" : "NO_GPU";
		Map<String, Object> summary = new LinkedHashMap<>();
		summary.put("result", result);
		summary.put("exitCode", exit);
		summary.put("started", started.toString());
		summary.put("seconds", (Instant.now().toEpochMilli() - started.toEpochMilli()) / 1000.0);
		summary.put("steps", steps);
		Files.writeString(this.bundle.out().resolve("summary.json"),
				JsonMapper.shared().writerWithDefaultPrettyPrinter().writeValueAsString(summary));
		this.log.println();
		this.log.printf(Locale.ROOT, "%s (exit code %d)%s%n", result, exit,
				(exit == NO_GPU) ? ": no CUDA device here; the checks that need none passed" : "");
		return exit;
	}

	private StepResult report(StepResult step) {
		this.log.printf(Locale.ROOT, "%n[%s] %s (%.1f s)%n  %s%n", step.status(), step.name(), step.seconds(),
				step.summary());
		step.details().forEach((key, value) -> {
			if (key.equals("checks")) {
				((List<?>) value).forEach((check) -> this.log.println("    " + check));
			}
			else if (!JSON_ONLY.contains(key)) {
				this.log.println("    " + key + ": " + value);
			}
		});
		return step;
	}

	/** Runs a step, turning anything it throws into a failed step that says what was thrown. */
	private static StepResult step(String name, Step step) {
		long start = System.nanoTime();
		try {
			return step.run();
		}
		catch (Exception ex) {
			return new StepResult(name, Status.FAILED, "the step broke off: " + ex, EnvironmentStep.seconds(start),
					Map.of());
		}
	}

	@FunctionalInterface
	private interface Step {

		StepResult run() throws Exception;

	}

	/** Prints to the console and to the log file at once. */
	private static final class Tee extends PrintStream {

		private final PrintStream file;

		Tee(PrintStream console, PrintStream file) {
			super(console, true);
			this.file = file;
		}

		@Override
		public void write(byte[] buffer, int offset, int length) {
			super.write(buffer, offset, length);
			this.file.write(buffer, offset, length);
		}

	}

}
