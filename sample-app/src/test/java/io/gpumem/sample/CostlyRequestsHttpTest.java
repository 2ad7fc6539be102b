package io.gpumem.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Costly requests: a request past its deadline stops, gives its memory back and answers 503; and while the one
 * admitted piece of GPU work runs, others are turned away with 503 and {@code Retry-After} instead of piling up.
 * The costly request runs far longer than its deadline on any machine, so only a request that never stops
 * crosses the waits' bounds.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=host", "sample.request-timeout=5s", "gpumem.admission.max-concurrent=1",
				"gpumem.admission.max-wait=100ms" })
class CostlyRequestsHttpTest {

	private static final String COSTLY = "{\"nodes\":1000000,\"edgesPerNode\":4,\"seed\":7,\"iterations\":1000}";

	@LocalServerPort
	private int port;

	@Autowired
	private StratifiedMemoryPool devicePool;

	@Autowired
	private GpuAdmission admission;

	private final HttpClient http = HttpClient.newHttpClient();

	@AfterEach
	void nothingLeftRunning() {
		await().atMost(Duration.ofMinutes(1))
			.until(() -> this.admission.active() == 0 && this.devicePool.usedBytes() == 0);
	}

	@Test
	void aRequestPastItsDeadlineStopsAndAnswers503() throws Exception {
		HttpResponse<String> response = post("/api/graphs/pagerank", COSTLY);
		assertThat(response.statusCode()).isEqualTo(503);
		assertThat(response.body()).contains("the request ran past its deadline of 5000 ms (sample.request-timeout)");
		await().atMost(Duration.ofMinutes(1)).until(() -> this.devicePool.usedBytes() == 0);
	}

	@Test
	void whileTheAdmittedWorkRunsOtherWorkIsTurnedAwayWithRetryAfter() throws Exception {
		CompletableFuture<HttpResponse<String>> costly = this.http.sendAsync(request("/api/graphs/pagerank", COSTLY),
				HttpResponse.BodyHandlers.ofString());
		await().atMost(Duration.ofMinutes(1))
			.pollInterval(Duration.ofMillis(5))
			.until(() -> this.admission.active() == 1);
		HttpResponse<String> small = post("/api/vectors/add", "{\"a\":[1],\"b\":[2]}");
		assertThat(small.statusCode()).isEqualTo(503);
		assertThat(small.headers().firstValue("Retry-After").map(Integer::parseInt))
			.as("the mean time a permit is held, at least a second").hasValueSatisfying((seconds) -> assertThat(seconds)
				.isPositive());
		assertThat(small.body()).contains("GPU work on host device 0 not admitted within",
				"1 pieces of work run at once (the limit)");
		assertThat(this.admission.rejections()).isPositive();
		assertThat(costly.get(1, TimeUnit.MINUTES).body()).contains("ran past its deadline");
		HttpResponse<String> after = post("/api/vectors/add", "{\"a\":[1],\"b\":[2]}");
		assertThat(after.statusCode()).isEqualTo(200);
	}

	private HttpResponse<String> post(String path, String body) throws Exception {
		return this.http.send(request(path, body), HttpResponse.BodyHandlers.ofString());
	}

	private HttpRequest request(String path, String body) {
		return HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.timeout(Duration.ofSeconds(30))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build();
	}

}
