package io.gpumem.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import io.gpumem.sample.graphs.Graph;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

/**
 * The sample's HTTP contract, checked over real HTTP against a running service with references
 * computed here on fresh random inputs: the sample's own tests run it on the host backend, and the GPU
 * verification runs it against the packaged service on CUDA. Each check throws an {@link AssertionError}
 * that says what differed.
 */
public final class SampleContract {

	private static final Duration TIMEOUT = Duration.ofMinutes(2);

	/**
	 * Pools hand back blocks released after a stream's work at their maintenance, every second: this bound is
	 * crossed only where that never happens.
	 */
	private static final Duration SETTLE = Duration.ofMinutes(1);

	/** The sample's service that acquires the vectors' buffers. */
	private static final String SERVICE = "io.gpumem.sample.vectors.VectorService.";

	private final URI base;

	private final SplittableRandom random;

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

	private final JsonMapper json = JsonMapper.shared();

	/** Checks the service at {@code base} (such as {@code http://localhost:8080}) on inputs drawn from {@code seed}. */
	public SampleContract(URI base, long seed) {
		this.base = base;
		this.random = new SplittableRandom(seed);
	}

	/** Every check of the vector and graph endpoints, by name, in the order they should run. */
	public Map<String, Runnable> checks() {
		Map<String, Runnable> checks = new LinkedHashMap<>();
		checks.put("add and saxpy", this::addAndSaxpy);
		checks.put("reduce SUM, MIN and MAX", this::reductions);
		checks.put("PageRank with dangling nodes", this::pageRankWithDanglingNodes);
		checks.put("PageRank of a generated graph", this::pageRankOfAGeneratedGraph);
		checks.put("8 concurrent clients", () -> concurrentClients(8, 15));
		checks.put("memory map and history under load", this::memoryMapUnderLoad);
		checks.put("nothing left in use", this::nothingLeftInUse);
		return checks;
	}

	/** Element-wise add and saxpy equal float32 arithmetic ({@code Math.fma} for saxpy) at several sizes. */
	public void addAndSaxpy() {
		for (int n : new int[] { 1, 1000, 131_073 }) {
			float[] a = randomFloats(this.random, n);
			float[] b = randomFloats(this.random, n);
			float alpha = (float) this.random.nextDouble(-3, 3);
			float[] sum = floats(post("/api/vectors/add", Map.of("a", a, "b", b)).get("result"));
			float[] saxpy = floats(post("/api/vectors/saxpy", Map.of("alpha", alpha, "x", a, "y", b)).get("result"));
			assertThat(sum).as("add of %d elements", n).hasSize(n);
			assertThat(saxpy).as("saxpy of %d elements", n).hasSize(n);
			for (int i = 0; i < n; i++) {
				assertThat(sum[i]).as("add, element %d of %d", i, n).isEqualTo(a[i] + b[i]);
				assertThat(saxpy[i]).as("saxpy, element %d of %d", i, n).isEqualTo(Math.fma(alpha, a[i], b[i]));
			}
		}
	}

	/** MIN and MAX are exact; SUM is a float32 sum in whatever order the backend adds. */
	public void reductions() {
		float[] values = randomFloats(this.random, 50_000);
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
		assertThat(reduce("SUM", values)).as("SUM of %d values", values.length).isCloseTo(sum, within(1e-5 * magnitude));
		assertThat((float) reduce("MIN", values)).as("MIN").isEqualTo(min);
		assertThat((float) reduce("max", values)).as("MAX, op in lower case").isEqualTo(max);
	}

	/** Ranks of a graph where every seventh node has no out-edges, against a double-precision reference. */
	public void pageRankWithDanglingNodes() {
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
		JsonNode answer = post("/api/graphs/pagerank", Map.of("edges", edges, "iterations", 40, "damping", 0.85));
		float[] ranks = floats(answer.get("ranks"));
		double[] expected = PageRankReference.ranks(nodes, edges, 40, 0.85);
		assertThat(answer.get("iterations").asInt()).isEqualTo(40);
		assertThat(ranks).hasSize(nodes);
		double total = 0;
		for (int v = 0; v < nodes; v++) {
			assertThat((double) ranks[v]).as("rank of node %d", v).isCloseTo(expected[v], offset(1e-5));
			total += ranks[v];
		}
		assertThat(total).as("sum of the ranks").isCloseTo(1.0, offset(1e-4));
	}

	/** The ten best nodes of a generated graph, in order, against the reference on the same graph. */
	public void pageRankOfAGeneratedGraph() {
		JsonNode answer = post("/api/graphs/pagerank", Map.of("nodes", 2000, "edgesPerNode", 4, "seed", 7,
				"iterations", 30));
		double[] expected = PageRankReference.ranks(2000, PageRankReference.edges(Graph.generate(2000, 4, 7)), 30,
				0.85);
		JsonNode top = answer.get("top");
		assertThat(top.size()).as("nodes in top").isEqualTo(10);
		double previous = Double.MAX_VALUE;
		for (JsonNode entry : top) {
			int node = entry.get("node").asInt();
			double rank = entry.get("rank").asDouble();
			assertThat(rank).as("rank of node %d", node).isCloseTo(expected[node], offset(1e-6))
				.isLessThanOrEqualTo(previous);
			previous = rank;
		}
		double tenth = Arrays.stream(expected).boxed().sorted(Comparator.reverseOrder()).toList().get(9);
		assertThat(top.get(9).get("rank").asDouble()).as("tenth best rank").isCloseTo(tenth, offset(1e-6));
	}

	/** {@code clients} threads each send {@code rounds} add and MAX requests of random sizes; every answer is right. */
	public void concurrentClients(int clients, int rounds) {
		ExecutorService executor = Executors.newFixedThreadPool(clients);
		try {
			List<Future<Integer>> results = new ArrayList<>();
			for (int c = 0; c < clients; c++) {
				long seed = this.random.nextLong();
				results.add(executor.submit(() -> {
					SplittableRandom random = new SplittableRandom(seed);
					for (int r = 0; r < rounds; r++) {
						int n = 1 + random.nextInt(20_000);
						float[] a = randomFloats(random, n);
						float[] b = randomFloats(random, n);
						float[] sum = floats(post("/api/vectors/add", Map.of("a", a, "b", b)).get("result"));
						float max = Float.NEGATIVE_INFINITY;
						for (int i = 0; i < n; i++) {
							assertThat(sum[i]).as("add, element %d of %d", i, n).isEqualTo(a[i] + b[i]);
							max = Math.max(max, a[i]);
						}
						assertThat((float) reduce("MAX", a)).as("MAX of %d values", n).isEqualTo(max);
					}
					return rounds;
				}));
			}
			for (Future<Integer> result : results) {
				assertThat(result.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(rounds);
			}
		}
		catch (Exception ex) {
			throw new AssertionError("a concurrent client failed: " + ex, ex);
		}
		finally {
			executor.shutdownNow();
		}
	}

	/**
	 * While clients add vectors of 1.2 MB (buffers the history records by default), every segment of the device
	 * pool's snapshot is filled by its blocks, and a snapshot catches a lent buffer whose acquiring frames name
	 * the sample's vector service; the history names the service for those buffers' acquires that kept their frames
	 * (a sample by bytes). Once the load has stopped, the segments add up to the reserved bytes.
	 */
	public void memoryMapUnderLoad() {
		int n = 300_000;
		float[] a = randomFloats(this.random, n);
		float[] b = randomFloats(this.random, n);
		ExecutorService clients = Executors.newFixedThreadPool(3);
		AtomicBoolean running = new AtomicBoolean(true);
		try {
			for (int c = 0; c < 3; c++) {
				clients.submit(() -> {
					while (running.get()) {
						post("/api/vectors/add", Map.of("a", a, "b", b));
					}
					return null;
				});
			}
			await("a snapshot showing a lent buffer acquired by the vector service").atMost(TIMEOUT)
				.pollInterval(Duration.ofMillis(10))
				.until(() -> segmentsAreFilled(get("/actuator/gpumem/device/snapshot")));
		}
		finally {
			running.set(false);
			clients.shutdown();
		}
		try {
			assertThat(clients.awaitTermination(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isTrue();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new AssertionError("interrupted", ex);
		}
		JsonNode snapshot = get("/actuator/gpumem/device/snapshot");
		segmentsAreFilled(snapshot);
		assertThat(snapshot.get("segments").valueStream().mapToLong((segment) -> segment.get("bytes").asLong()).sum())
			.as("segments add up to the reserved bytes")
			.isEqualTo(snapshot.get("reservedBytes").asLong())
			.isEqualTo(get("/actuator/gpumem/device").get("reservedBytes").asLong());
		List<JsonNode> acquires = get("/actuator/gpumem/device/history").get("events")
			.valueStream()
			.filter((event) -> event.get("type").asString().equals("ACQUIRE") && event.get("bytes").asLong() == 4L * n)
			.toList();
		assertThat(acquires).as("the history's acquires of 1.2 MB").isNotEmpty();
		assertThat(acquires).filteredOn((event) -> !event.get("frames").isEmpty())
			.as("those that kept their frames, about one in fourteen")
			.isNotEmpty()
			.allSatisfy((event) -> assertThat(event.get("frames").toString()).contains(SERVICE));
	}

	/** Checks that the snapshot's blocks fill its segments; answers whether a lent block names the vector service. */
	private static boolean segmentsAreFilled(JsonNode snapshot) {
		boolean named = false;
		for (JsonNode segment : snapshot.get("segments")) {
			long blocks = 0;
			for (JsonNode block : segment.get("blocks")) {
				assertThat(block.get("offset").asLong()).as("blocks in address order, without gaps").isEqualTo(blocks);
				blocks += block.get("bytes").asLong();
				named |= block.get("state").asString().equals("LENT")
						&& block.get("acquiredAt").toString().contains(SERVICE);
			}
			assertThat(blocks).as("a segment's blocks fill it").isEqualTo(segment.get("bytes").asLong());
		}
		return named;
	}

	/**
	 * After the requests, every pool has served hits, lends nothing, and its books balance: at once, or
	 * within the pools' maintenance interval for staging memory released after a stream's work.
	 */
	public void nothingLeftInUse() {
		await().atMost(SETTLE).pollInterval(Duration.ofMillis(100)).untilAsserted(this::poolsAreIdle);
	}

	private void poolsAreIdle() {
		JsonNode pools = get("/actuator/gpumem").get("pools");
		for (String name : List.of("device", "pinned", "reduction")) {
			JsonNode pool = pools.get(name);
			assertThat(pool).as("pool %s", name).isNotNull();
			assertThat(pool.get("hits").asLong()).as("%s hits", name).isPositive();
			assertThat(pool.get("inUseBuffers").asLong()).as("%s buffers in use", name).isZero();
			assertThat(pool.get("cachedBytes").asLong()).as("%s cached = reserved", name)
				.isEqualTo(pool.get("reservedBytes").asLong());
			assertThat(pool.get("requests").asLong()).as("%s requests = hits + misses", name)
				.isEqualTo(pool.get("hits").asLong() + pool.get("misses").asLong());
		}
	}

	/** The backend the service runs on, as {@code /actuator/gpumem} names it. */
	public String backend() {
		return get("/actuator/gpumem").get("backend").asString();
	}

	private double reduce(String op, float[] values) {
		return post("/api/vectors/reduce", Map.of("op", op, "values", values)).get("result").asDouble();
	}

	private JsonNode post(String path, Object body) {
		return send(HttpRequest.newBuilder(this.base.resolve(path))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(this.json.writeValueAsString(body))));
	}

	private JsonNode get(String path) {
		return send(HttpRequest.newBuilder(this.base.resolve(path)).GET());
	}

	private JsonNode send(HttpRequest.Builder request) {
		HttpResponse<String> response;
		try {
			response = this.http.send(request.timeout(TIMEOUT).build(), HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new AssertionError("request failed: " + ex, ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new AssertionError("interrupted", ex);
		}
		assertThat(response.statusCode()).as("status of %s, answering %s", response.request().uri(), response.body())
			.isEqualTo(200);
		return this.json.readTree(response.body());
	}

	private static float[] randomFloats(SplittableRandom random, int n) {
		float[] values = new float[n];
		for (int i = 0; i < n; i++) {
			values[i] = (float) random.nextDouble(-100, 100);
		}
		return values;
	}

	private static float[] floats(JsonNode array) {
		float[] values = new float[array.size()];
		for (int i = 0; i < values.length; i++) {
			values[i] = array.get(i).floatValue();
		}
		return values;
	}

}
