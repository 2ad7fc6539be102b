package io.gpumem.verification;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import io.gpumem.cuda.CudaProbe;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Packs the GPU bundle from what this build staged, with {@code scripts/gpu-bundle.sh}, and runs its
 * {@code gpu-verify.sh} here, so that neither script rots between GPU machines. Without a CUDA device (as
 * on CI) the verification must say so, pass every check on the host backend, and exit with 77.
 */
class GpuBundleIT {

	private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

	private static final long BUNDLE_LIMIT = 60L << 20;

	@Test
	void theBundleIsPackedAndVerifiesThisMachine(@TempDir Path temp) throws Exception {
		assertThat(run(temp.resolve("bundle.log"), "scripts/gpu-bundle.sh", "--no-build")).isZero();
		Path bundle = ROOT.resolve("target/gpu-bundle");
		long bytes = Files.size(bundle.resolve("gpumem-gpu.tar.xz")) + Files.size(bundle.resolve("gpu-verify.sh"));
		assertThat(bytes).as("bundle size").isLessThanOrEqualTo(BUNDLE_LIMIT);

		boolean gpu = CudaProbe.probe(0).usable();
		Path out = temp.resolve("out");
		int exit = run(temp.resolve("verify.log"), bundle.resolve("gpu-verify.sh").toString(), "--out", out.toString());
		JsonNode summary = JsonMapper.shared().readTree(out.resolve("summary.json").toFile());
		assertThat(exit).as("exit code; summary: %s", summary).isEqualTo(gpu ? 0 : 77);
		assertThat(summary.get("result").asString()).isEqualTo(gpu ? "PASSED" : "NO_GPU");
		assertThat(summary.get("exitCode").asInt()).isEqualTo(exit);
		List<String> steps = new ArrayList<>();
		summary.get("steps").forEach((step) -> steps.add(step.get("name").asString()));
		assertThat(steps).containsExactly("device, driver and CUDA versions", "real-driver tests", "sample service",
				"GPU benchmarks", "allocator comparison");

		JsonNode environment = step(summary, 0);
		assertThat(environment.get("details").get("cudaUsable").asBoolean()).isEqualTo(gpu);
		JsonNode tests = step(summary, 1).get("details");
		assertThat(tests.get("tests").asInt()).as("tests tagged gpu").isGreaterThanOrEqualTo(13);
		assertThat(tests.get("failed").asInt()).isZero();
		JsonNode sample = step(summary, 2);
		assertThat(sample.get("status").asString()).isEqualTo("PASSED");
		assertThat(sample.get("details").get("backend").asString()).isEqualTo(gpu ? "cuda" : "host");
		List<String> checks = new ArrayList<>();
		sample.get("details").get("checks").forEach((check) -> {
			assertThat(check.get("status").asString()).as("check %s", check).isEqualTo("PASSED");
			checks.add(check.get("name").asString());
		});
		assertThat(checks).contains("add and saxpy", "reduce SUM, MIN and MAX", "PageRank with dangling nodes",
				"PageRank of a generated graph", "8 concurrent clients", "nothing left in use");
		assertThat(out.resolve("tests.xml")).exists();
		assertThat(out.resolve("sample.log")).content().contains("Started SampleApplication");
		if (!gpu) {
			assertThat(environment.get("status").asString()).isEqualTo("NO_GPU");
			assertThat(environment.get("summary").asString()).startsWith("no CUDA device: ");
			assertThat(step(summary, 3).get("status").asString()).isEqualTo("NO_GPU");
			assertThat(step(summary, 4).get("status").asString()).as("%s", step(summary, 4)).isEqualTo("NO_GPU");
			assertThat(out.resolve("allocators.md")).content().contains("sample-mixed", "gpumem-fixed", "stand-in");
			assertThat(out.resolve("verify.log")).content()
				.contains("no CUDA device here; the checks that need none passed");
		}
	}

	private static JsonNode step(JsonNode summary, int index) {
		return summary.get("steps").get(index);
	}

	/** Runs a command from the repository's root with this JVM's JDK, its output going to {@code log}. */
	private static int run(Path log, String... command) throws IOException, InterruptedException {
		ProcessBuilder builder = new ProcessBuilder(command).directory(ROOT.toFile())
			.redirectErrorStream(true)
			.redirectOutput(log.toFile());
		builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
		Process process = builder.start();
		if (!process.waitFor(10, TimeUnit.MINUTES)) {
			process.destroyForcibly();
			throw new AssertionError(String.join(" ", command) + " did not end within 10 minutes");
		}
		System.out.println(Files.readString(log));
		return process.exitValue();
	}

}
