package io.gpumem.sample;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.client.RestTestClient;

import io.gpumem.autoconfigure.GpumemPools;
import io.gpumem.pool.PoolStatistics;
import io.gpumem.sample.graphs.Graph;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;
import static org.assertj.core.api.Assertions.within;

/** The sample's HTTP contract over real HTTP, against references computed here on fresh random inputs. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=host", "sample.max-elements=200000" })
@AutoConfigureRestTestClient
class SampleServiceHttpTest {

	private static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {
	};

	@Autowired
	private RestTestClient client;

	@Autowired
	private GpumemPools pools;

	private final SplittableRandom random = new SplittableRandom();

	@Test
	void addAndSaxpyAgreeWithFloat32ArithmeticAtEverySize() {
		for (int n : new int[] { 1, 1000, 100_000 }) {
			float[] a = randomFloats(n);
			float[] b = randomFloats(n);
			float alpha = (float) this.random.nextDouble(-3, 3);
			float[] sum = floats(post("/api/vectors/add", Map.of("a", a, "b", b)).get("result"));
			float[] saxpy = floats(post("/api/vectors/saxpy", Map.of("alpha", alpha, "x", a, "y", b)).get("result"));
			for (int i = 0; i < n; i++) {
				assertThat(sum[i]).isEqualTo(a[i] + b[i]);
				assertThat(saxpy[i]).isEqualTo(Math.fma(alpha, a[i], b[i]));
			}
		}
	}

	@Test
	void reductionsAgreeWithTheReference() {
		float[] values = randomFloats(50_000);
		double sum = 0;
		double magnitude = 0;
		float min = Float.POSITIVE_INFINITY;
		float max = Float.NEGATIVE_INFINITY;
		for (float value : values) {
			sum += value;
			magnitude += Math.abs(value);
			min = Math.min(min, value);
			max = Math.max(max, value);
		}
		assertThat(number(post("/api/vectors/reduce", Map.of("op", "SUM", "values", values)).get("result")))
			.as("a float32 sum, in whatever order the backend adds")
			.isCloseTo(sum, within(1e-5 * magnitude));
		assertThat(floatOf(post("/api/vectors/reduce", Map.of("op", "MIN", "values", values)).get("result")))
			.isEqualTo(min);
		assertThat(floatOf(post("/api/vectors/reduce", Map.of("op", "max", "values", values)).get("result")))
			.isEqualTo(max);
	}

	@Test
	void pageRankWithDanglingNodesAgreesWithTheReference() {
		int nodes = 300;
		List<int[]> edgeList = new ArrayList<>();
		for (int u = 0; u < nodes; u++) {
			int degree = (u % 7 == 0) ? 0 : this.random.nextInt(1, 6);
			for (int k = 0; k < degree; k++) {
				edgeList.add(new int[] { u, this.random.nextInt(nodes) });
			}
		}
		edgeList.add(new int[] { 1, nodes - 1 });
		int[][] edges = edgeList.toArray(int[][]::new);
		Map<String, Object> answer = post("/api/graphs/pagerank",
				Map.of("edges", edges, "iterations", 40, "damping", 0.85));
		float[] ranks = floats(answer.get("ranks"));
		double[] expected = PageRankReference.ranks(nodes, edges, 40, 0.85);
		assertThat(answer.get("iterations")).isEqualTo(40);
		assertThat(ranks).hasSize(nodes);
		double total = 0;
		for (int v = 0; v < nodes; v++) {
			assertThat((double) ranks[v]).as("rank of node %d", v).isCloseTo(expected[v], offset(1e-5));
			total += ranks[v];
		}
		assertThat(total).isCloseTo(1.0, offset(1e-4));
	}

	@Test
	void pageRankOfAGeneratedGraphGivesItsTenBestNodes() {
		Map<String, Object> answer = post("/api/graphs/pagerank",
				Map.of("nodes", 2000, "edgesPerNode", 4, "seed", 7, "iterations", 30));
		Graph graph = Graph.generate(2000, 4, 7);
		double[] expected = PageRankReference.ranks(2000, PageRankReference.edges(graph), 30, 0.85);
		@SuppressWarnings("unchecked")
		List<Map<String, Object>> top = (List<Map<String, Object>>) answer.get("top");
		assertThat(top).hasSize(10);
		double previous = Double.MAX_VALUE;
		for (Map<String, Object> entry : top) {
			int node = ((Number) entry.get("node")).intValue();
			double rank = number(entry.get("rank"));
			assertThat(rank).isCloseTo(expected[node], offset(1e-6)).isLessThanOrEqualTo(previous);
			previous = rank;
		}
		double tenth = Arrays.stream(expected).boxed().sorted(Comparator.reverseOrder()).toList().get(9);
		assertThat(number(top.get(9).get("rank"))).isCloseTo(tenth, offset(1e-6));
	}

	@Test
	void badInputsAnswer400NamingTheProblem() {
		badRequest("/api/vectors/add", "{\"a\":[1,2],\"b\":[1]}", "a has 2 elements, b has 1");
		badRequest("/api/vectors/add", "{\"a\":[],\"b\":[]}", "a must be a non-empty array");
		badRequest("/api/vectors/saxpy", "{\"x\":[1],\"y\":[1]}", "alpha must be a number");
		badRequest("/api/vectors/reduce", "{\"op\":\"AVG\",\"values\":[1]}", "unknown op 'AVG'");
		badRequest("/api/vectors/reduce", "{\"op\":\"SUM\"}", "values must be a non-empty array");
		badRequest("/api/graphs/pagerank", "{\"edges\":[[0,1],[1,-1]]}", "out of range");
		badRequest("/api/graphs/pagerank", "{\"edges\":[[0,5]],\"nodes\":3}", "ids go from 0 to 2");
		badRequest("/api/graphs/pagerank", "{\"edges\":[[0,1]],\"iterations\":0}", "iterations must be between 1");
		badRequest("/api/graphs/pagerank", "{\"iterations\":3}", "give either edges, or nodes and edgesPerNode");
		badRequest("/api/vectors/add", "{\"a\":[1,", "not valid JSON");
		badRequest("/api/vectors/reduce", "{\"op\":\"SUM\",\"values\":\"many\"}", "not valid JSON");
		float[] big = new float[200_001];
		badRequest("/api/vectors/reduce", Map.of("op", "SUM", "values", big),
				"values has 200001 elements, more than the limit of 200000 (sample.max-elements)");
		badRequest("/api/graphs/pagerank", "{\"nodes\":300000,\"edgesPerNode\":1}", "more than the limit of 200000");
	}

	@Test
	void repeatedRequestsHitEveryPoolAndLeaveNothingInUse() {
		for (int i = 0; i < 5; i++) {
			post("/api/vectors/add", Map.of("a", randomFloats(1000), "b", randomFloats(1000)));
			post("/api/vectors/reduce", Map.of("op", "SUM", "values", randomFloats(1000)));
			post("/api/graphs/pagerank", Map.of("edges", new int[][] { { 0, 1 }, { 1, 2 } }, "iterations", 3));
		}
		Map<String, Object> gpumem = get("/actuator/gpumem");
		@SuppressWarnings("unchecked")
		Map<String, Map<String, Object>> shown = (Map<String, Map<String, Object>>) gpumem.get("pools");
		for (String pool : List.of("device", "pinned", "reduction")) {
			assertThat(((Number) shown.get(pool).get("hits")).longValue()).as("%s hits", pool).isPositive();
			assertThat(((Number) shown.get(pool).get("inUseBuffers")).longValue()).as("%s in use", pool).isZero();
		}
	}

	@Test
	void operationsEndpointsAreExposedAndTrimsAreReadOnly() {
		this.client.get()
			.uri("/actuator/health/readiness")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.components.gpumem.status")
			.isEqualTo("UP");
		this.client.get()
			.uri("/actuator/prometheus")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.value((scrape) -> assertThat(scrape).contains("gpumem_pool_memory_bytes{pool=\"device\"",
					"gpumem_pool_requests_total{pool=\"reduction\""));
		this.client.get().uri("/actuator/metrics/gpumem.pool.requests").exchange().expectStatus().isOk();
		this.client.post()
			.uri("/actuator/gpumem")
			.contentType(MediaType.APPLICATION_JSON)
			.body("{}")
			.exchange()
			.expectStatus()
			.isEqualTo(405);
	}

	@Test
	void eightConcurrentClientsAllGetRightAnswersAndTheBooksBalance() throws Exception {
		ExecutorService clients = Executors.newFixedThreadPool(8);
		List<Future<Integer>> results = new ArrayList<>();
		for (int c = 0; c < 8; c++) {
			long seed = c;
			results.add(clients.submit(() -> {
				SplittableRandom random = new SplittableRandom(seed);
				int checked = 0;
				for (int r = 0; r < 15; r++) {
					int n = 1 + random.nextInt(20_000);
					float[] a = randomFloats(random, n);
					float[] b = randomFloats(random, n);
					float[] sum = floats(post("/api/vectors/add", Map.of("a", a, "b", b)).get("result"));
					for (int i = 0; i < n; i++) {
						assertThat(sum[i]).isEqualTo(a[i] + b[i]);
					}
					float max = Float.NEGATIVE_INFINITY;
					for (float value : a) {
						max = Math.max(max, value);
					}
					assertThat(floatOf(post("/api/vectors/reduce", Map.of("op", "MAX", "values", a)).get("result")))
						.isEqualTo(max);
					checked++;
				}
				return checked;
			}));
		}
		for (Future<Integer> result : results) {
			assertThat(result.get(2, TimeUnit.MINUTES)).isEqualTo(15);
		}
		clients.shutdown();
		this.pools.asMap().forEach((name, pool) -> {
			PoolStatistics stats = pool.statistics();
			assertThat(stats.inUseBuffers()).as("%s in use", name).isZero();
			assertThat(stats.cachedBytes()).as("%s cached = reserved", name).isEqualTo(stats.reservedBytes());
			assertThat(stats.requests()).as("%s requests", name).isEqualTo(stats.hits() + stats.misses());
		});
	}

	private Map<String, Object> post(String uri, Object body) {
		return this.client.post()
			.uri(uri)
			.contentType(MediaType.APPLICATION_JSON)
			.body(body)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(JSON)
			.returnResult()
			.getResponseBody();
	}

	private Map<String, Object> get(String uri) {
		return this.client.get().uri(uri).exchange().expectStatus().isOk().expectBody(JSON).returnResult()
			.getResponseBody();
	}

	private void badRequest(String uri, Object body, String message) {
		this.client.post()
			.uri(uri)
			.contentType(MediaType.APPLICATION_JSON)
			.body(body)
			.exchange()
			.expectStatus()
			.isBadRequest()
			.expectBody()
			.jsonPath("$.error")
			.value((String error) -> assertThat(error).contains(message));
	}

	private float[] randomFloats(int n) {
		return randomFloats(this.random, n);
	}

	private static float[] randomFloats(SplittableRandom random, int n) {
		float[] values = new float[n];
		for (int i = 0; i < n; i++) {
			values[i] = (float) random.nextDouble(-100, 100);
		}
		return values;
	}

	private static float[] floats(Object json) {
		List<?> list = (List<?>) json;
		float[] values = new float[list.size()];
		for (int i = 0; i < values.length; i++) {
			values[i] = ((Number) list.get(i)).floatValue();
		}
		return values;
	}

	private static float floatOf(Object json) {
		return ((Number) json).floatValue();
	}

	private static double number(Object json) {
		return ((Number) json).doubleValue();
	}

}
