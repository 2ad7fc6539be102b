package io.gpumem.sample;

import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Costly requests: a request past its deadline stops, gives its memory back and answers 503; a client that
 * closes its connection has its work stopped long before that, while one that pipelines its next request is
 * not taken for gone; and while the one admitted piece of GPU work runs, others are turned away with 503 and
 * {@code Retry-After} instead of piling up.
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
		await(Duration.ofSeconds(10), () -> this.admission.active() == 0 && this.devicePool.usedBytes() == 0);
	}

	@Test
	void aRequestPastItsDeadlineStopsAndAnswers503() throws Exception {
		HttpResponse<String> response = post("/api/graphs/pagerank", COSTLY);
		assertThat(response.statusCode()).isEqualTo(503);
		assertThat(response.body()).contains("the request ran past its deadline of 5000 ms (sample.request-timeout)");
		await(Duration.ofSeconds(1), () -> this.devicePool.usedBytes() == 0);
	}

	@Test
	void aClientThatClosesItsConnectionHasItsWorkStoppedAndItsMemoryBack() throws Exception {
		try (Socket socket = new Socket("localhost", this.port)) {
			socket.getOutputStream().write(rawPost("/api/graphs/pagerank", COSTLY, "keep-alive"));
			await(Duration.ofSeconds(3), () -> this.admission.active() == 1 && this.devicePool.usedBytes() > 0);
		}
		await(Duration.ofSeconds(1), () -> this.admission.active() == 0 && this.devicePool.usedBytes() == 0);
	}

	@Test
	void aPipelinedRequestIsKeptForItsTurnAndBothAreAnswered() throws Exception {
		String first = "{\"nodes\":400000,\"edgesPerNode\":4,\"seed\":7,\"iterations\":150}";
		try (Socket socket = new Socket("localhost", this.port)) {
			OutputStream out = socket.getOutputStream();
			out.write(rawPost("/api/graphs/pagerank", first, "keep-alive"));
			await(Duration.ofSeconds(3), () -> this.admission.active() == 1);
			out.write(rawPost("/api/vectors/add", "{\"a\":[1,2],\"b\":[2,3]}", "close"));
			String answers = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			assertThat(answers.split("HTTP/1.1 200", -1)).as(answers).hasSize(3);
			assertThat(answers).contains("\"top\":[").endsWith("{\"result\":[3.0,5.0]}");
		}
	}

	@Test
	void whileTheAdmittedWorkRunsOtherWorkIsTurnedAwayWithRetryAfter() throws Exception {
		CompletableFuture<HttpResponse<String>> costly = this.http.sendAsync(request("/api/graphs/pagerank", COSTLY),
				HttpResponse.BodyHandlers.ofString());
		await(Duration.ofSeconds(5), () -> this.admission.active() == 1);
		HttpResponse<String> small = post("/api/vectors/add", "{\"a\":[1],\"b\":[2]}");
		assertThat(small.statusCode()).isEqualTo(503);
		assertThat(small.headers().firstValue("Retry-After")).hasValue("1");
		assertThat(small.body()).contains("GPU work on host device 0 not admitted: 1 pieces of work run at once");
		assertThat(this.admission.rejections()).isPositive();
		assertThat(costly.get(10, TimeUnit.SECONDS).body()).contains("ran past its deadline");
		HttpResponse<String> after = post("/api/vectors/add", "{\"a\":[1],\"b\":[2]}");
		assertThat(after.statusCode()).isEqualTo(200);
	}

	private HttpResponse<String> post(String path, String body) throws Exception {
		return this.http.send(request(path, body), HttpResponse.BodyHandlers.ofString());
	}

	private static byte[] rawPost(String path, String body, String connection) {
		byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
		String head = "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
				+ "Content-Length: " + bytes.length + "\r\nConnection: " + connection + "\r\n\r\n";
		return (head + body).getBytes(StandardCharsets.UTF_8);
	}

	private HttpRequest request(String path, String body) {
		return HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.timeout(Duration.ofSeconds(30))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build();
	}

	private static void await(Duration timeout, BooleanSupplier condition) {
		long end = System.nanoTime() + timeout.toNanos();
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime() - end).as("waited %s for a condition", timeout).isNegative();
			try {
				Thread.sleep(5);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

}
