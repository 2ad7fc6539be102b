package io.gpumem.benchmarks;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * The quick mode: the hit path at 4 KiB and 1 MiB on 1 and 2 threads, gpumem against Netty with its
 * thread cache and against the backend, in about two minutes, printed as a table with ratios.
 * <pre>{@code java -cp gpumem-benchmarks/target/benchmarks.jar io.gpumem.benchmarks.QuickComparison}</pre>
 */
public final class QuickComparison {

	private static final String[] BENCHMARKS = { "gpumemPoolHit", "nettyPooledThreadCache", "backendAllocateFree" };

	private QuickComparison() {
	}

	public static void main(String[] args) throws RunnerException {
		Map<String, Double> nanos = new TreeMap<>();
		for (int threads : new int[] { 1, 2 }) {
			Options options = new OptionsBuilder()
				.include(PoolHitBenchmark.class.getSimpleName() + "\\.(" + String.join("|", BENCHMARKS) + ")$")
				.param("size", "4096", "1048576")
				.threads(threads)
				.forks(1)
				.warmupIterations(2)
				.warmupTime(TimeValue.seconds(1))
				.measurementIterations(3)
				.measurementTime(TimeValue.seconds(1))
				.build();
			Collection<RunResult> results = new Runner(options).run();
			for (RunResult result : results) {
				String benchmark = result.getParams().getBenchmark();
				String name = benchmark.substring(benchmark.lastIndexOf('.') + 1);
				nanos.put(key(name, result.getParams().getParam("size"), threads),
						result.getPrimaryResult().getScore());
			}
		}
		System.out.println();
		System.out.println("| size | threads | gpumem hit (ns) | Netty, thread cache (ns) | backend (ns) "
				+ "| Netty / gpumem | backend / gpumem |");
		System.out.println("|---|---|---|---|---|---|---|");
		for (String size : new String[] { "4096", "1048576" }) {
			for (int threads : new int[] { 1, 2 }) {
				Map<String, Double> row = new LinkedHashMap<>();
				for (String benchmark : BENCHMARKS) {
					row.put(benchmark, nanos.get(key(benchmark, size, threads)));
				}
				double gpumem = row.get("gpumemPoolHit");
				System.out.printf("| %s | %d | %.1f | %.1f | %.1f | %.2f | %.1f |%n", size, threads, gpumem,
						row.get("nettyPooledThreadCache"), row.get("backendAllocateFree"),
						row.get("nettyPooledThreadCache") / gpumem, row.get("backendAllocateFree") / gpumem);
			}
		}
	}

	private static String key(String benchmark, String size, int threads) {
		return benchmark + "/" + size + "/" + threads;
	}

}
