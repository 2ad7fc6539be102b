package io.gpumem.verification;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import io.gpumem.sample.SampleContract;
import io.gpumem.verification.StepResult.Status;

/**
 * The packaged sample service, started with {@code gpumem.backend=cuda} (the host backend where no CUDA
 * device is found), checked endpoint by endpoint against references by {@link SampleContract}, 8 concurrent
 * clients included, then stopped as a service is, gracefully, its pools closing, with no error logged.
 */
final class SampleServiceStep {

	private static final String MAIN = "io.gpumem.sample.SampleApplication";

	private SampleServiceStep() {
	}

	/**
	 * Starts the service (within {@code seconds}), checks it (within twice that) and stops it (within
	 * half of it).
	 */
	static StepResult run(Bundle bundle, boolean gpu, long seconds) throws Exception {
		long start = System.nanoTime();
		String backend = gpu ? "cuda" : "host";
		int port = freePort();
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("backend", backend);
		details.put("port", port);
		JavaProcess service = JavaProcess.start(bundle.root(), bundle.sampleClassPath(), List.of("-Xmx2g"), MAIN,
				List.of("--server.port=" + port, "--gpumem.backend=" + backend), bundle.out().resolve("sample.log"));
		URI base = URI.create("http://localhost:" + port);
		try {
			String notReady = awaitReadiness(service, base, seconds);
			if (notReady != null) {
				return new StepResult("sample service", Status.FAILED, notReady, EnvironmentStep.seconds(start),
						details);
			}
			details.put("startSeconds", EnvironmentStep.seconds(start));
			long seed = System.nanoTime();
			details.put("seed", seed);
			SampleContract contract = new SampleContract(base, seed);
			List<Map<String, Object>> checks = new CopyOnWriteArrayList<>();
			details.put("checks", checks);
			ExecutorService checker = Executors.newSingleThreadExecutor();
			try {
				checker.submit(() -> {
					checks.add(check("backend is " + backend, () -> {
						String running = contract.backend();
						if (!running.equals(backend)) {
							throw new AssertionError("the service runs on the " + running + " backend, not " + backend);
						}
					}));
					contract.checks().forEach((name, check) -> checks.add(check(name, check)));
				}).get(2 * seconds, TimeUnit.SECONDS);
			}
			catch (TimeoutException ex) {
				return new StepResult("sample service", Status.FAILED, "the checks did not end within " + 2 * seconds
						+ " s; " + checks.size() + " ended", EnvironmentStep.seconds(start), details);
			}
			finally {
				checker.shutdownNow();
			}
			details.put("gpumem", JsonMapper.shared().readTree(get(base.resolve("/actuator/gpumem"))));
			int stopped = service.stop(seconds / 2);
			details.put("exitCode", stopped);
			checks.add(check("no error in the service's log", () -> {
				List<String> errors = errors(service);
				if (!errors.isEmpty()) {
					throw new AssertionError(errors.size() + " lines logged at ERROR, the first: " + errors.get(0));
				}
			}));
			long failed = checks.stream().filter((check) -> !"PASSED".equals(check.get("status"))).count();
			String summary = (checks.size() - failed) + " of " + checks.size() + " checks passed on the " + backend
					+ " backend";
			if (failed == 0 && stopped == JavaProcess.TIMED_OUT) {
				return new StepResult("sample service", Status.FAILED,
						summary + ", but it did not stop within " + seconds / 2 + " s",
						EnvironmentStep.seconds(start), details);
			}
			return new StepResult("sample service", (failed == 0) ? Status.PASSED : Status.FAILED, summary,
					EnvironmentStep.seconds(start), details);
		}
		finally {
			if (service.isAlive()) {
				service.waitFor(0);
			}
		}
	}

	private static Map<String, Object> check(String name, Runnable check) {
		long start = System.nanoTime();
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("name", name);
		try {
			check.run();
			result.put("status", "PASSED");
		}
		catch (AssertionError | RuntimeException ex) {
			result.put("status", "FAILED");
			result.put("message", String.valueOf(ex.getMessage()).strip());
		}
		result.put("seconds", EnvironmentStep.seconds(start));
		return result;
	}

	/** Null once the service answers UP on its readiness group, or why it never did. */
	private static String awaitReadiness(JavaProcess service, URI base, long seconds) throws Exception {
		long deadline = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
		URI readiness = base.resolve("/actuator/health/readiness");
		while (System.nanoTime() < deadline) {
			if (!service.isAlive()) {
				return "the service stopped while starting: " + lastLines(service, 15);
			}
			try {
				if ("UP".equals(JsonMapper.shared().readTree(get(readiness)).path("status").asString())) {
					return null;
				}
			}
			catch (IOException | JacksonException ex) {
				// not listening yet
			}
			Thread.sleep(250);
		}
		return "the service was not ready within " + seconds + " s: " + lastLines(service, 15);
	}

	private static String get(URI uri) throws IOException, InterruptedException {
		HttpResponse<String> response = HttpClient.newHttpClient()
			.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
					HttpResponse.BodyHandlers.ofString());
		return response.body();
	}

	private static List<String> errors(JavaProcess service) {
		try {
			return Files.readAllLines(service.log()).stream().filter((line) -> line.contains(" ERROR ")).toList();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static String lastLines(JavaProcess service, int count) throws IOException {
		List<String> lines = Files.readAllLines(service.log());
		return String.join("\n", lines.subList(Math.max(0, lines.size() - count), lines.size()));
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

}
