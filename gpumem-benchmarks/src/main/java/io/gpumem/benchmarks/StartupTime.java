package io.gpumem.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The sample service's start time with gpumem off, on without a warm-up, and on as shipped (16 × 64 KiB
 * warmed into the device pool), as the service reports it ("Started ... in N seconds"). The three
 * variants run in turn, {@code runs} times each, on the host backend; the medians and their ratios
 * are printed.
 * <p>
 * Run after the README's build:
 * {@code java -cp gpumem-benchmarks/target/benchmarks.jar io.gpumem.benchmarks.StartupTime [runs]}
 */
public final class StartupTime {

	private static final Pattern STARTED = Pattern.compile("Started \\S+ in ([0-9.]+) seconds");

	private static final Path JAR = Path.of("sample-app", "target", "sample-app-0.1.0-SNAPSHOT.jar");

	private static final String[] COMMON = { "--server.port=0", "--gpumem.backend=host",
			"--management.endpoint.health.validate-group-membership=false" };

	private StartupTime() {
	}

	public static void main(String[] args) throws IOException, InterruptedException {
		int runs = (args.length > 0) ? Integer.parseInt(args[0]) : 7;
		if (!Files.isRegularFile(JAR)) {
			throw new IllegalStateException(JAR + " not found: run from the repository root after the README's build");
		}
		String[][] variants = { { "--gpumem.enabled=false" }, { "--gpumem.device-pool.warm.64KB=0" }, {} };
		String[] names = { "gpumem off", "gpumem on, no warm-up", "gpumem on, as shipped (16 x 64 KiB warmed)" };
		double[][] seconds = new double[variants.length][runs];
		for (int run = 0; run < runs; run++) {
			for (int v = 0; v < variants.length; v++) {
				seconds[v][run] = start(variants[v]);
			}
		}
		double off = median(seconds[0]);
		for (int v = 0; v < variants.length; v++) {
			double median = median(seconds[v]);
			System.out.printf(Locale.ROOT, "%-45s median %.3f s  (runs: %s)  on/off %.2f%n", names[v], median,
					Arrays.toString(seconds[v]), median / off);
		}
		double on = median(seconds[2]);
		System.out.printf(Locale.ROOT, "warm-up's share of the start with gpumem on: %.1f%%%n",
				100 * (on - median(seconds[1])) / on);
	}

	private static double start(String... variant) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-jar", JAR.toString()));
		command.addAll(List.of(COMMON));
		command.addAll(List.of(variant));
		Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
		try (BufferedReader output = new BufferedReader(
				new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
			for (String line; (line = output.readLine()) != null;) {
				Matcher matcher = STARTED.matcher(line);
				if (matcher.find()) {
					return Double.parseDouble(matcher.group(1));
				}
			}
			throw new IllegalStateException("the sample service stopped before it started: " + command);
		}
		finally {
			process.destroy();
			process.waitFor();
		}
	}

	private static double median(double[] values) {
		double[] sorted = values.clone();
		Arrays.sort(sorted);
		return sorted[sorted.length / 2];
	}

}
