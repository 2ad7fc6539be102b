package io.gpumem.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import io.gpumem.autoconfigure.GpumemPools;
import io.gpumem.pool.PoolStatistics;
import io.gpumem.sample.limits.HeapBudget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Normal, costly and hostile clients at once, on loopback, for a bounded number of requests: normal
 * requests get right answers (or a 503 with Retry-After, never a 500), costly ones stop at their deadline
 * or are turned away, hostile ones get their 4xx, and afterwards no pool has anything in use and the heap
 * budget is whole. The normal requests' latencies are printed (p50, p99) to compare runs, not asserted.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=host", "sample.max-body-size=1MB", "sample.heap-budget=64MB",
				"sample.request-timeout=3s", "gpumem.admission.max-concurrent=4", "gpumem.admission.max-wait=1s" })
class MixedLoadHttpTest {

	private static final int NORMAL_CLIENTS = 8;

	private static final int NORMAL_ROUNDS = 40;

	@LocalServerPort
	private int port;

	@Autowired
	private GpumemPools pools;

	@Autowired
	private HeapBudget heap;

	private final HttpClient http = HttpClient.newHttpClient();

	@Test
	void normalRequestsAreAnsweredRightWhileCostlyAndHostileOnesAreHeldOff() throws Exception {
		ExecutorService clients = Executors.newFixedThreadPool(NORMAL_CLIENTS + 4);
		Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
		ConcurrentLinkedQueue<Long> normalNanos = new ConcurrentLinkedQueue<>();
		List<Future<?>> work = new ArrayList<>();
		for (int c = 0; c < NORMAL_CLIENTS; c++) {
			long seed = c;
			work.add(clients.submit(() -> normal(new Random(seed), statuses, normalNanos)));
		}
		for (int c = 0; c < 2; c++) {
			work.add(clients.submit(() -> costly(statuses)));
			work.add(clients.submit(() -> hostile(statuses)));
		}
		for (Future<?> client : work) {
			client.get(10, TimeUnit.MINUTES);
		}
		clients.shutdown();
		assertThat(statuses).as("no 500, whatever came").doesNotContainKeys(500, 502, 504);
		assertThat(statuses).as("normal requests served").containsKey(200);
		long[] sorted = normalNanos.stream().mapToLong(Long::longValue).sorted().toArray();
		System.out.printf("mixed load: statuses %s; normal requests p50 %.1f ms, p99 %.1f ms over %d%n", statuses,
				sorted[sorted.length / 2] / 1e6, sorted[(int) (sorted.length * 0.99)] / 1e6, sorted.length);
		await("staging memory released after its stream's work, at the pools' maintenance").atMost(Duration.ofMinutes(1))
			.untilAsserted(() -> this.pools.asMap().forEach((name, pool) -> {
				PoolStatistics stats = pool.statistics();
				assertThat(stats.inUseBuffers()).as(name).isZero();
				assertThat(stats.cachedBytes()).as("%s cached = reserved", name).isEqualTo(stats.reservedBytes());
			}));
		assertThat(this.heap.reservedBytes()).isZero();
	}

	private Void normal(Random random, Map<Integer, AtomicInteger> statuses, ConcurrentLinkedQueue<Long> nanos)
			throws Exception {
		for (int round = 0; round < NORMAL_ROUNDS; round++) {
			int n = 1 + random.nextInt(2000);
			float[] a = new float[n];
			float[] b = new float[n];
			StringBuilder body = new StringBuilder("{\"a\":[");
			for (int i = 0; i < n; i++) {
				a[i] = random.nextInt(1000) / 8f;
				body.append((i == 0) ? "" : ",").append(a[i]);
			}
			body.append("],\"b\":[");
			for (int i = 0; i < n; i++) {
				b[i] = random.nextInt(1000) / 8f;
				body.append((i == 0) ? "" : ",").append(b[i]);
			}
			long start = System.nanoTime();
			HttpResponse<String> response = post("/api/vectors/add", body.append("]}").toString());
			nanos.add(System.nanoTime() - start);
			count(statuses, response);
			if (response.statusCode() == 200) {
				float[] sum = new float[n];
				for (int i = 0; i < n; i++) {
					sum[i] = a[i] + b[i];
				}
				assertThat(response.body()).isEqualTo("{\"result\":" + Arrays.toString(sum).replace(" ", "") + "}");
			}
			else {
				assertThat(response.statusCode()).as(response.body()).isEqualTo(503);
				assertThat(response.headers().firstValue("Retry-After")).isPresent();
			}
		}
		return null;
	}

	private Void costly(Map<Integer, AtomicInteger> statuses) throws Exception {
		for (int round = 0; round < 3; round++) {
			HttpResponse<String> response = post("/api/graphs/pagerank",
					"{\"nodes\":300000,\"edgesPerNode\":4,\"seed\":" + round + ",\"iterations\":1000}");
			count(statuses, response);
			assertThat(response.statusCode()).as(response.body()).isIn(200, 503);
		}
		return null;
	}

	private Void hostile(Map<Integer, AtomicInteger> statuses) throws Exception {
		String large = "{\"op\":\"SUM\",\"values\":[" + "1,".repeat(600_000) + "1]}";
		for (int round = 0; round < 10; round++) {
			HttpResponse<String> tooLarge = post("/api/vectors/reduce", large);
			count(statuses, tooLarge);
			assertThat(tooLarge.statusCode()).isEqualTo(413);
			HttpResponse<String> malformed = post("/api/vectors/add", "{\"a\":[1,\"NaN\"],\"b\":[1,2]}");
			count(statuses, malformed);
			assertThat(malformed.statusCode()).isIn(400, 503);
		}
		return null;
	}

	private static void count(Map<Integer, AtomicInteger> statuses, HttpResponse<String> response) {
		statuses.computeIfAbsent(response.statusCode(), (status) -> new AtomicInteger()).incrementAndGet();
	}

	private HttpResponse<String> post(String path, String body) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.timeout(Duration.ofSeconds(30))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

}
