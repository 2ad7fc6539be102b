package io.gpumem.sample;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import com.jayway.jsonpath.DocumentContext;
import com.jayway.jsonpath.JsonPath;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An add too large for the budget of a 96 MB device answers 503 at once, as its claim of the device memory is refused
 * before it touches the device, naming the budget, and the report is written to {@code gpumem.history.oom-dump-dir}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=host", "gpumem.host.capacity=96MB", "gpumem.memory-fraction=0.3",
				"gpumem.device-pool.max-wait=0s" })
@AutoConfigureRestTestClient
class OutOfMemoryReportHttpTest {

	@TempDir
	static Path dumps;

	@Autowired
	private RestTestClient client;

	@DynamicPropertySource
	static void dumpDirectory(DynamicPropertyRegistry registry) {
		registry.add("gpumem.history.oom-dump-dir", () -> dumps.toString());
	}

	@Test
	void theAnswerAndTheDumpNameTheRequestAndTheBudget() throws IOException {
		float[] large = new float[4 << 20];
		this.client.post()
			.uri("/api/vectors/add")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("a", large, "b", large))
			.exchange()
			.expectStatus()
			.isEqualTo(503)
			.expectBody()
			.jsonPath("$.error")
			.value((String error) -> assertThat(error).startsWith("Out of DEVICE memory: tried to allocate 48.00 MiB.")
				.contains("Its limit is 28.80 MiB.", "larger than the budget, refused at once"));
		List<Path> files;
		try (Stream<Path> listed = Files.list(dumps)) {
			files = listed.toList();
		}
		assertThat(files).singleElement().satisfies((dump) -> {
			DocumentContext written = JsonPath.parse(dump.toFile());
			assertThat(written.read("$.pool", String.class)).isEqualTo("device");
			assertThat(written.read("$.failure.requestedBytes", Long.class)).isEqualTo(48L << 20);
			assertThat(written.read("$.failure.holders", List.class)).as("nothing was taken for the request").isEmpty();
		});
	}

}
