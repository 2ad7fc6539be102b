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
 * An add too large for a 96 MB device answers 503 naming the sample's code that holds the memory and the
 * largest free block, and the report is written to {@code gpumem.history.oom-dump-dir}.
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
	void theAnswerAndTheDumpNameTheSamplesCodeAsTheHolder() throws IOException {
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
			.value((String error) -> assertThat(error).contains("The largest holders: ", "MiB in ",
					"acquired at ", "io.gpumem.sample.vectors.VectorService.elementWise(VectorService.java:")
				.containsPattern("The pool's largest free block is [0-9.]+ [KM]?i?B\\."));
		List<Path> files;
		try (Stream<Path> listed = Files.list(dumps)) {
			files = listed.toList();
		}
		assertThat(files).singleElement().satisfies((dump) -> {
			DocumentContext written = JsonPath.parse(dump.toFile());
			assertThat(written.read("$.pool", String.class)).isEqualTo("device");
			List<String> frames = written.read("$.failure.holders[*].frames[*]");
			assertThat(frames).anyMatch(
					(frame) -> frame.startsWith("io.gpumem.sample.vectors.VectorService.elementWise(VectorService.java:"));
		});
	}

}
