package io.gpumem.sample.docs;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every {@code curl} example of the README and the docs, sent to the sample as the page starts it, answers what
 * the page shows: so that the docs cannot drift from the service.
 */
class DocsCurlExamplesTest {

	/** A page's command that starts the sample, with the arguments the examples after it run under. */
	private static final Pattern START = Pattern
		.compile("java\\s(.*)-jar\\s+sample-app/target/sample-app-\\S+\\.jar(.*)");

	/** A curl example, written as a command or after a prompt. */
	private static final Pattern CURL = Pattern.compile("(?:\\$ )?(curl .*)");

	private static final Pattern VARIABLE = Pattern.compile("([A-Za-z_][A-Za-z0-9_]*)='([^']*)'");

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@TestFactory
	Stream<DynamicTest> everyExampleAnswersAsShown() {
		return DocPages.all().stream()
			.filter((page) -> DocPages.blocks(page).stream().anyMatch(DocsCurlExamplesTest::hasCurl))
			.map((page) -> DynamicTest.dynamicTest(DocPages.name(page), () -> run(page)));
	}

	@Test
	void curlExamplesAreInBashBlocksOnly() {
		assertThat(DocPages.all().stream().flatMap((page) -> DocPages.blocks(page).stream())
			.filter((block) -> !block.language().equals("bash") && hasCurl(block.lines()))
			.map((block) -> block.where(0)))
			.as("curl examples outside bash blocks, which the docs' test would not run").isEmpty();
	}

	private void run(Path page) throws Exception {
		List<String> mismatches = new ArrayList<>();
		Map<String, String> variables = new HashMap<>();
		ConfigurableApplicationContext sample = null;
		try {
			for (DocPages.Block block : DocPages.blocks(page)) {
				if (!block.language().equals("bash")) {
					continue;
				}
				for (int i = 0; i < block.lines().size(); i++) {
					String line = block.lines().get(i).trim();
					Matcher start = START.matcher(line);
					Matcher variable = VARIABLE.matcher(line);
					Matcher curl = CURL.matcher(line);
					if (start.find()) {
						close(sample);
						sample = start(start.group(1).replaceAll("(^|\\s)-D", "$1--").replaceAll("(^|\\s)-X\\S*", " ")
								+ " " + start.group(2));
					}
					else if (variable.matches()) {
						variables.put(variable.group(1), variable.group(2));
					}
					else if (curl.matches()) {
						String next = (i + 1 < block.lines().size()) ? block.lines().get(i + 1) : null;
						CurlExample example = CurlExample.parse(block.where(i), curl.group(1), next, variables);
						sample = (sample != null) ? sample : start("");
						String mismatch = send(example, port(sample));
						if (mismatch != null) {
							mismatches.add(mismatch);
						}
					}
				}
			}
		}
		finally {
			close(sample);
		}
		assertThat(mismatches).as("examples of %s whose answers differ from the page", DocPages.name(page)).isEmpty();
	}

	private String send(CurlExample example, int port) throws IOException, InterruptedException {
		HttpResponse<String> response = this.http.send(example.request(port), HttpResponse.BodyHandlers.ofString());
		return example.mismatch(response.statusCode(), response.body());
	}

	private static ConfigurableApplicationContext start(String arguments) {
		return DocPages.startSample(Arrays.stream(arguments.trim().split("\\s+")).filter((arg) -> !arg.isEmpty())
			.toList(), null);
	}

	private static int port(ConfigurableApplicationContext sample) {
		return sample.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
	}

	private static void close(ConfigurableApplicationContext sample) {
		if (sample != null) {
			sample.close();
		}
	}

	private static boolean hasCurl(DocPages.Block block) {
		return block.language().equals("bash") && hasCurl(block.lines());
	}

	private static boolean hasCurl(List<String> lines) {
		return lines.stream().anyMatch((line) -> CURL.matcher(line.trim()).matches());
	}

}
