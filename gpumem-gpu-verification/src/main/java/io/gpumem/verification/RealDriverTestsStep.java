package io.gpumem.verification;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.xml.parsers.DocumentBuilderFactory;

import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import io.gpumem.verification.StepResult.Status;

/**
 * Every test tagged {@code gpu} in the bundle's test jars (the real-driver scenarios, backend selection),
 * run by the JUnit console launcher in a JVM of its own. On a machine with a CUDA device the real-driver
 * scenarios must run, not be skipped.
 */
final class RealDriverTestsStep {

	static final String TAG = "gpu";

	private static final String LAUNCHER = "org.junit.platform.console.ConsoleLauncher";

	private static final String REAL_DRIVER_SCENARIOS = "io.gpumem.cuda.JCudaBackendTest";

	private RealDriverTestsStep() {
	}

	static StepResult run(Bundle bundle, boolean gpu, long timeoutSeconds) throws Exception {
		long start = System.nanoTime();
		Path reports = Files.createDirectories(bundle.work().resolve("test-reports"));
		List<String> arguments = new ArrayList<>(List.of("execute", "--disable-banner", "--disable-ansi-colors",
				"--details=tree", "--fail-if-no-tests", "--include-tag=" + TAG, "--reports-dir=" + reports));
		for (String jar : bundle.testJars()) {
			arguments.add("--scan-classpath=" + jar);
		}
		Path log = bundle.out().resolve("tests.log");
		int exit = JavaProcess.run(bundle.root(), bundle.toolsClassPath(), LAUNCHER, arguments, log, timeoutSeconds);
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("tag", TAG);
		details.put("exitCode", exit);
		Path xml = reports.resolve("TEST-junit-jupiter.xml");
		if (!Files.exists(xml)) {
			return failed(start, details, (exit == JavaProcess.TIMED_OUT)
					? "the tests did not end within " + timeoutSeconds + " s" : "no test report (exit code " + exit
							+ "); see tests.log");
		}
		Files.copy(xml, bundle.out().resolve("tests.xml"));
		Element suite = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(xml.toFile()).getDocumentElement();
		int tests = Integer.parseInt(suite.getAttribute("tests"));
		int skipped = Integer.parseInt(suite.getAttribute("skipped"));
		int failed = Integer.parseInt(suite.getAttribute("failures")) + Integer.parseInt(suite.getAttribute("errors"));
		List<String> failures = new ArrayList<>();
		List<String> skippedScenarios = new ArrayList<>();
		NodeList cases = suite.getElementsByTagName("testcase");
		for (int i = 0; i < cases.getLength(); i++) {
			Element test = (Element) cases.item(i);
			String name = test.getAttribute("classname") + "." + test.getAttribute("name");
			for (String outcome : List.of("failure", "error")) {
				NodeList problems = test.getElementsByTagName(outcome);
				if (problems.getLength() > 0) {
					failures.add(name + ": " + ((Element) problems.item(0)).getAttribute("message"));
				}
			}
			if (test.getElementsByTagName("skipped").getLength() > 0
					&& test.getAttribute("classname").equals(REAL_DRIVER_SCENARIOS)) {
				skippedScenarios.add(name);
			}
		}
		details.put("tests", tests);
		details.put("succeeded", tests - skipped - failed);
		details.put("skipped", skipped);
		details.put("failed", failed);
		details.put("failures", failures);
		String counts = tests + " tests: " + (tests - skipped - failed) + " passed, " + failed + " failed, " + skipped
				+ " skipped";
		if (exit != 0 || failed > 0) {
			return failed(start, details, counts + ((exit == JavaProcess.TIMED_OUT) ? ", timed out" : ""));
		}
		if (gpu && !skippedScenarios.isEmpty()) {
			details.put("skippedOnTheGpu", skippedScenarios);
			return failed(start, details, counts + ", but " + skippedScenarios.size()
					+ " real-driver scenarios were skipped on a machine with a CUDA device");
		}
		Status status = gpu ? Status.PASSED : Status.NO_GPU;
		return new StepResult("real-driver tests", status,
				counts + (gpu ? "" : " (the real-driver scenarios skip without a CUDA device)"),
				EnvironmentStep.seconds(start), details);
	}

	private static StepResult failed(long start, Map<String, Object> details, String summary) {
		return new StepResult("real-driver tests", Status.FAILED, summary, EnvironmentStep.seconds(start), details);
	}

}
