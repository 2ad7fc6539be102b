package io.gpumem.verification;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import io.gpumem.verification.StepResult.Status;

/**
 * The GPU benchmarks, briefly: a pool hit against {@code cuMemAlloc}/{@code cuMemFree} and
 * {@code cuMemAllocAsync}/{@code cuMemFreeAsync}, 1 KiB to 64 MiB ({@code GpuComparison}), then the
 * service workload over the CUDA backend, gpumem against Netty and against {@code cuMemAlloc} per
 * request, at 16, 64 and 200 workers ({@code ServiceWorkload}). Without a CUDA device the comparison must
 * still start and say why it does not measure, and the workload, which needs CUDA, is not run.
 */
final class BenchmarksStep {

	static final String GPU_COMPARISON = "io.gpumem.benchmarks.GpuComparison";

	private static final String SERVICE_WORKLOAD = "io.gpumem.benchmarks.ServiceWorkload";

	/** The workload's options: the default requests and worker counts, one run of each, on CUDA. */
	private static final List<String> WORKLOAD = List.of("--backend", "cuda", "--repeat", "1");

	/** JMH options for a run of about a minute: one fork, one warm-up and three measured iterations of 0.3 s. */
	static final List<String> BRIEF = List.of("-f", "1", "-wi", "1", "-i", "3", "-w", "300ms", "-r", "300ms");

	private BenchmarksStep() {
	}

	static StepResult run(Bundle bundle, boolean gpu, long timeoutSeconds) throws Exception {
		long start = System.nanoTime();
		Path json = results(bundle);
		List<String> arguments = new ArrayList<>(BRIEF);
		arguments.addAll(List.of("-rf", "json", "-rff", json.toAbsolutePath().toString()));
		Path log = bundle.out().resolve("benchmarks.log");
		int exit = JavaProcess.run(bundle.root(), bundle.toolsClassPath(), GPU_COMPARISON, arguments, log,
				timeoutSeconds);
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("command", "GpuComparison " + String.join(" ", BRIEF));
		details.put("exitCode", exit);
		if (exit != 0) {
			return new StepResult("GPU benchmarks", Status.FAILED,
					"GpuComparison " + JavaProcess.ending(exit, timeoutSeconds) + "; see benchmarks.log",
					EnvironmentStep.seconds(start), details);
		}
		if (!gpu) {
			String said = Files.readAllLines(log).stream().filter((line) -> line.startsWith("GPU comparison not run"))
				.findFirst()
				.orElse(null);
			Status status = (said != null) ? Status.NO_GPU : Status.FAILED;
			return new StepResult("GPU benchmarks", status,
					(said != null) ? said : "GpuComparison did not say why it measured nothing; see benchmarks.log",
					EnvironmentStep.seconds(start), details);
		}
		Map<String, Map<String, Double>> nanosBySize = nanosBySize(json);
		details.put("nanosPerOperationBySize", nanosBySize);
		Path workloadJson = bundle.out().resolve("service-workload.json");
		List<String> workload = new ArrayList<>(WORKLOAD);
		workload.addAll(List.of("--json", workloadJson.toAbsolutePath().toString()));
		details.put("workloadCommand", "ServiceWorkload " + String.join(" ", WORKLOAD));
		int workloadExit = JavaProcess.run(bundle.root(), bundle.toolsClassPath(), SERVICE_WORKLOAD, workload, log,
				timeoutSeconds);
		details.put("workloadExitCode", workloadExit);
		if (workloadExit != 0 || !Files.exists(workloadJson)) {
			return new StepResult("GPU benchmarks", Status.FAILED,
					"the service workload " + JavaProcess.ending(workloadExit, timeoutSeconds) + "; see benchmarks.log",
					EnvironmentStep.seconds(start), details);
		}
		details.put("serviceWorkload", JsonMapper.shared().readTree(workloadJson.toFile()));
		return new StepResult("GPU benchmarks", nanosBySize.isEmpty() ? Status.FAILED : Status.PASSED,
				nanosBySize.size() + " sizes measured against cuMemAlloc and cuMemAllocAsync, and the service workload "
						+ "on CUDA; tables in benchmarks.log",
				EnvironmentStep.seconds(start), details);
	}

	/** Where the step writes {@code GpuComparison}'s JMH results. */
	static Path results(Bundle bundle) {
		return bundle.out().resolve("benchmarks.json");
	}

	/** {@code GpuComparison}'s JMH results: nanoseconds per operation by size, then by benchmark. */
	static Map<String, Map<String, Double>> nanosBySize(Path json) {
		Map<String, Map<String, Double>> nanosBySize = new LinkedHashMap<>();
		for (JsonNode result : JsonMapper.shared().readTree(json.toFile())) {
			String benchmark = result.get("benchmark").asString();
			nanosBySize.computeIfAbsent(result.path("params").path("size").asString(), (size) -> new LinkedHashMap<>())
				.put(benchmark.substring(benchmark.lastIndexOf('.') + 1),
						result.get("primaryMetric").get("score").asDouble());
		}
		return nanosBySize;
	}

}
