package io.gpumem.benchmarks;

import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;

import io.gpumem.cuda.CudaProbe;
import io.gpumem.cuda.CudaProbeResult;

/**
 * Runs {@link GpuAllocationBenchmark} where a CUDA device is usable and prints the pool hit against
 * {@code cuMemAlloc}/{@code cuMemFree} and {@code cuMemAllocAsync}/{@code cuMemFreeAsync} as ratios;
 * elsewhere it prints why not and exits with 0, so that the same command runs on every machine. JMH's own
 * options may follow, such as {@code -wi 1 -i 2 -w 200ms -r 200ms} for a brief run or
 * {@code -rf json -rff gpu.json} for the results as JSON.
 * <pre>{@code java -cp gpumem-benchmarks/target/benchmarks.jar io.gpumem.benchmarks.GpuComparison}</pre>
 */
public final class GpuComparison {

	private GpuComparison() {
	}

	public static void main(String[] args) throws RunnerException, CommandLineOptionException {
		CudaProbeResult probe = CudaProbe.probe(0);
		if (!probe.usable()) {
			System.out.println("GPU comparison not run: no usable CUDA device (" + probe.reason() + ")");
			return;
		}
		System.out.println("device: " + probe);
		Collection<RunResult> results = new Runner(new OptionsBuilder().parent(new CommandLineOptions(args))
			.include(GpuAllocationBenchmark.class.getSimpleName())
			.build()).run();
		Map<Long, Map<String, Double>> bySize = new TreeMap<>();
		for (RunResult result : results) {
			String benchmark = result.getParams().getBenchmark();
			bySize.computeIfAbsent(Long.parseLong(result.getParams().getParam("size")), size -> new TreeMap<>())
				.put(benchmark.substring(benchmark.lastIndexOf('.') + 1), result.getPrimaryResult().getScore());
		}
		System.out.println();
		System.out.println("| size | gpumem hit (ns) | cuMemAlloc+cuMemFree (ns) | cuMemAllocAsync+cuMemFreeAsync (ns) "
				+ "| cuMemAlloc / gpumem | async / gpumem |");
		System.out.println("|---|---|---|---|---|---|");
		bySize.forEach((size, row) -> {
			double gpumem = row.get("gpumemPoolHit");
			System.out.printf(Locale.ROOT, "| %d | %.1f | %.1f | %.1f | %.1f | %.1f |%n", size, gpumem,
					row.get("cuMemAllocFree"), row.get("cuMemAllocFreeAsync"), row.get("cuMemAllocFree") / gpumem,
					row.get("cuMemAllocFreeAsync") / gpumem);
		});
	}

}
