package io.gpumem.sample;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.sample.limits.HeapBudget;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Requests as a hostile client sends them: bodies beyond the limit, declared or not, many at once,
 * numbers that are not numbers, results float32 cannot hold. The service answers each with its status
 * and a message, holds no more heap than its budget, and keeps answering.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=host", "sample.max-body-size=2MB", "sample.heap-budget=16MB",
				"sample.queue-timeout=200ms", "management.endpoint.gpumem.access=unrestricted" })
class HostileRequestsHttpTest {

	private static final long LIMIT = 2L * 1024 * 1024;

	@LocalServerPort
	private int port;

	@Autowired
	private HeapBudget heap;

	@Autowired
	private StratifiedMemoryPool devicePool;

	private final HttpClient http = HttpClient.newHttpClient();

	private final ExecutorService clients = Executors.newFixedThreadPool(16);

	@AfterEach
	void stop() {
		this.clients.shutdownNow();
	}

	@Test
	void aDeclaredBodyBeyondTheLimitAnswers413BeforeItIsRead() throws Exception {
		try (Socket socket = new Socket("localhost", this.port)) {
			OutputStream out = socket.getOutputStream();
			out.write(("POST /api/vectors/reduce HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
					+ "Content-Length: 251658240\r\nConnection: close\r\n\r\n{\"op\":\"SUM\",\"values\":[1,")
				.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			String response = readResponse(socket.getInputStream());
			assertThat(response).startsWith("HTTP/1.1 413")
				.contains("the request body of 251658240 bytes is larger than the limit of " + LIMIT
						+ " bytes (sample.max-body-size)");
		}
		assertServiceAnswers();
	}

	@Test
	void aChunkedBodyGrowingPastTheLimitIsCutOffWith413() throws Exception {
		HttpResponse<String> response = send("/api/vectors/reduce",
				HttpRequest.BodyPublishers.ofInputStream(() -> new EndlessNumbers()));
		assertThat(response.statusCode()).isEqualTo(413);
		assertThat(response.body())
			.isEqualTo("{\"error\":\"the request body is larger than the limit of " + LIMIT + " bytes (sample.max-body-size)\"}");
		assertServiceAnswers();
		assertThat(this.heap.reservedBytes()).isZero();
	}

	@Test
	void manyLargeBodiesAtOnceAreServedOrTurnedAwayWithinTheHeapBudget() throws Exception {
		String body = vectorBody(150_000);
		assertThat((long) body.length() * HeapBudget.BYTES_PER_BODY_BYTE).as("two fit the budget, three do not")
			.isBetween(this.heap.bytes() / 3, this.heap.bytes() / 2);
		List<Future<HttpResponse<String>>> responses = new ArrayList<>();
		for (int i = 0; i < 32; i++) {
			responses.add(this.clients.submit(() -> send("/api/vectors/add", HttpRequest.BodyPublishers.ofString(body))));
		}
		int served = 0;
		for (Future<HttpResponse<String>> future : responses) {
			HttpResponse<String> response = future.get();
			assertThat(response.statusCode()).as(response.body()).isIn(200, 503);
			if (response.statusCode() == 200) {
				assertThat(response.body()).startsWith("{\"result\":[2.0,2.0,");
				served++;
			}
			else {
				assertThat(response.headers().firstValue("Retry-After")).isPresent();
				assertThat(response.body()).contains("heap budget", "sample.queue-timeout");
			}
		}
		assertThat(served).isPositive();
		assertThat(this.heap.peakReservedBytes()).as("the most reserved at once: a body's, within the budget")
			.isGreaterThanOrEqualTo((long) body.length() * HeapBudget.BYTES_PER_BODY_BYTE)
			.isLessThanOrEqualTo(this.heap.bytes());
		assertThat(this.heap.reservedBytes()).isZero();
		assertServiceAnswers();
	}

	@Test
	void aRequestNeedingMoreHeapThanTheWholeBudgetAnswers413() throws Exception {
		HttpResponse<String> response = send("/api/graphs/pagerank",
				HttpRequest.BodyPublishers.ofString("{\"nodes\":2000000,\"edgesPerNode\":2,\"iterations\":1}"));
		assertThat(response.statusCode()).isEqualTo(413);
		assertThat(response.body()).contains("more than the whole budget of 16.00 MiB", "sample.heap-budget");
		assertThat(this.heap.reservedBytes()).isZero();
	}

	@Test
	void numbersThatAreNotNumbersAnswer400NamingTheProblem() throws Exception {
		badRequest("/api/vectors/reduce", "{\"op\":\"SUM\",\"values\":[\"NaN\",1]}",
				"values[0] is NaN: numbers must be finite");
		badRequest("/api/vectors/reduce", "{\"op\":\"SUM\",\"values\":[1,\"-Infinity\"]}",
				"values[1] is -Infinity: numbers must be finite");
		badRequest("/api/vectors/add", "{\"a\":[\"1.5\"],\"b\":[1]}", "not valid JSON");
		badRequest("/api/graphs/pagerank", "{\"edges\":[[0,1]],\"iterations\":2.5}", "not valid JSON");
		badRequest("/api/graphs/pagerank", "{\"edges\":[[0,1]],\"iterations\":\"3\"}", "not valid JSON");
		badRequest("/api/graphs/pagerank", "{\"edges\":[[0,\"1\"]]}",
				"edge 0 must be a [source, target] pair of integer node ids");
		badRequest("/api/graphs/pagerank", "{\"edges\":[[0,1],[1.5,0]]}",
				"edge 1 must be a [source, target] pair of integer node ids");
		badRequest("/api/graphs/pagerank", "{\"edges\":[[0,1,2]]}", "edge 0 must be a [source, target] pair");
		badRequest("/api/graphs/pagerank", "{\"nodes\":\"5\",\"edgesPerNode\":1}", "not valid JSON");
		badRequest("/api/vectors/saxpy", "{\"alpha\":1e39,\"x\":[1],\"y\":[1]}", "alpha must be a finite number");
	}

	@Test
	void anEmptyBodyAnswers400WithoutNamingAJavaMethod() throws Exception {
		HttpResponse<String> response = send("/api/vectors/add", HttpRequest.BodyPublishers.noBody());
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.body()).isEqualTo("{\"error\":\"the request needs a JSON body\"}");
	}

	@Test
	void aResultFloat32CannotHoldAnswers422InsteadOfAString() throws Exception {
		HttpResponse<String> sum = send("/api/vectors/reduce",
				HttpRequest.BodyPublishers.ofString("{\"op\":\"SUM\",\"values\":[3e38,3e38]}"));
		assertThat(sum.statusCode()).isEqualTo(422);
		assertThat(sum.body()).contains("SUM of the values overflows float32: the result would be Infinity");
		HttpResponse<String> add = send("/api/vectors/add",
				HttpRequest.BodyPublishers.ofString("{\"a\":[1,3e38],\"b\":[1,3e38]}"));
		assertThat(add.statusCode()).isEqualTo(422);
		assertThat(add.body()).contains("a + b overflows float32 at element 1");
	}

	@Test
	void aTrimWithAnEmptyBodyTrimsEverythingCached() throws Exception {
		try (PooledBuffer buffer = this.devicePool.acquire(1 << 20)) {
			buffer.fill((byte) 1);
		}
		assertThat(this.devicePool.cachedBytes()).isPositive();
		HttpResponse<String> response = send("/actuator/gpumem", HttpRequest.BodyPublishers.ofString("{}"));
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).contains("\"releasedBytes\"");
		assertThat(this.devicePool.cachedBytes()).isZero();
	}

	private void badRequest(String path, String body, String message) throws Exception {
		HttpResponse<String> response = send(path, HttpRequest.BodyPublishers.ofString(body));
		assertThat(response.statusCode()).as(body).isEqualTo(400);
		assertThat(response.body()).as(body).contains(message);
	}

	private void assertServiceAnswers() throws Exception {
		HttpResponse<String> response = send("/api/vectors/add",
				HttpRequest.BodyPublishers.ofString("{\"a\":[1,2],\"b\":[3,4]}"));
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).isEqualTo("{\"result\":[4.0,6.0]}");
	}

	private HttpResponse<String> send(String path, HttpRequest.BodyPublisher body) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.timeout(Duration.ofSeconds(30))
			.header("Content-Type", "application/json")
			.POST(body)
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	/** The response's head and its body of the declared length, without waiting for the connection to close. */
	private static String readResponse(InputStream in) throws Exception {
		StringBuilder head = new StringBuilder();
		while (head.indexOf("\r\n\r\n") < 0) {
			int b = in.read();
			assertThat(b).as("the connection closed within the head: " + head).isNotNegative();
			head.append((char) b);
		}
		java.util.regex.Matcher length = java.util.regex.Pattern.compile("(?i)content-length: (\\d+)").matcher(head);
		assertThat(length.find()).as("a declared length in " + head).isTrue();
		return head + new String(in.readNBytes(Integer.parseInt(length.group(1))), StandardCharsets.UTF_8);
	}

	private static String vectorBody(int elements) {
		StringBuilder values = new StringBuilder(elements * 4);
		for (int i = 0; i < elements; i++) {
			values.append((i == 0) ? "" : ",").append("1.0");
		}
		return "{\"a\":[" + values + "],\"b\":[" + values + "]}";
	}

	/** A reduce request whose values never end: {@code {"op":"SUM","values":[1,1,1,…}. */
	private static final class EndlessNumbers extends InputStream {

		private final byte[] head = "{\"op\":\"SUM\",\"values\":[1".getBytes(StandardCharsets.US_ASCII);

		private long position;

		@Override
		public int read() {
			long at = this.position++;
			if (at < this.head.length) {
				return this.head[(int) at];
			}
			return ((at - this.head.length) % 2 == 0) ? ',' : '1';
		}

	}

}
