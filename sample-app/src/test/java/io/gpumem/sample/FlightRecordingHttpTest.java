package io.gpumem.sample;

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import jdk.jfr.Configuration;
import jdk.jfr.EventType;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/** A flight recording of the sample under requests, with the JDK's profile settings, holds gpumem's events. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=host", "gpumem.host.capacity=64MB",
				"management.endpoint.gpumem.access=unrestricted" })
@AutoConfigureRestTestClient
class FlightRecordingHttpTest {

	@Autowired
	private RestTestClient client;

	@Test
	void aProfileRecordingOfRequestsHoldsMissesSegmentsAndTrims(@TempDir Path directory) throws Exception {
		Path file = directory.resolve("sample.jfr");
		try (Recording recording = new Recording(Configuration.getConfiguration("profile"))) {
			recording.start();
			for (int n : new int[] { 3, 300_000, 1_000_000 }) {
				float[] values = new float[n];
				this.client.post()
					.uri("/api/vectors/add")
					.contentType(MediaType.APPLICATION_JSON)
					.body(Map.of("a", values, "b", values))
					.exchange()
					.expectStatus()
					.isOk();
			}
			this.client.post()
				.uri("/actuator/gpumem")
				.contentType(MediaType.APPLICATION_JSON)
				.body("{}")
				.exchange()
				.expectStatus()
				.isOk();
			recording.stop();
			recording.dump(file);
		}
		Set<String> recorded = RecordingFile.readAllEvents(file)
			.stream()
			.map(RecordedEvent::getEventType)
			.map(EventType::getName)
			.filter((name) -> name.startsWith("io.gpumem."))
			.collect(Collectors.toSet());
		assertThat(recorded).contains("io.gpumem.Miss", "io.gpumem.SegmentAllocated", "io.gpumem.SegmentReleased",
				"io.gpumem.Trim");
	}

}
