package io.gpumem.sample;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.MatchResult;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.client.RestTestClient;

import io.gpumem.autoconfigure.GpumemPools;
import io.gpumem.autoconfigure.GpumemProperties;
import io.gpumem.autoconfigure.test.NoBuffersLentExtension;
import io.gpumem.pool.PoolStatistics;

import static org.assertj.core.api.Assertions.assertThat;

/** The sample's HTTP contract ({@link SampleContract}) on the host backend, bad inputs and the operations endpoints. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "gpumem.backend=host", "sample.max-elements=300000" })
@AutoConfigureRestTestClient
@ExtendWith(NoBuffersLentExtension.class)
class SampleServiceHttpTest extends SampleContractTests {

	@Autowired
	private RestTestClient client;

	@Autowired
	private GpumemPools pools;

	@Autowired
	private GpumemProperties properties;

	@Test
	void badInputsAnswer400NamingTheProblem() {
		badRequest("/api/vectors/add", "{\"a\":[1,2],\"b\":[1]}", "a has 2 elements, b has 1");
		badRequest("/api/vectors/add", "{\"a\":[],\"b\":[]}", "a must be a non-empty array");
		badRequest("/api/vectors/saxpy", "{\"x\":[1],\"y\":[1]}", "alpha must be a number");
		badRequest("/api/vectors/reduce", "{\"op\":\"AVG\",\"values\":[1]}", "unknown op 'AVG'");
		badRequest("/api/vectors/reduce", "{\"op\":\"SUM\"}", "values must be a non-empty array");
		badRequest("/api/graphs/pagerank", "{\"edges\":[[0,1],[1,-1]]}", "out of range");
		badRequest("/api/graphs/pagerank", "{\"edges\":[[0,5]],\"nodes\":3}", "ids go from 0 to 2");
		badRequest("/api/graphs/pagerank", "{\"edges\":[[0,2147483647]]}",
				"nodes has 2147483648 elements, more than the limit of 300000");
		badRequest("/api/graphs/pagerank", "{\"edges\":[[0,1]],\"iterations\":0}", "iterations must be between 1");
		badRequest("/api/graphs/pagerank", "{\"iterations\":3}", "give either edges, or nodes and edgesPerNode");
		badRequest("/api/vectors/add", "{\"a\":[1,", "not valid JSON");
		badRequest("/api/vectors/reduce", "{\"op\":\"SUM\",\"values\":\"many\"}", "not valid JSON");
		float[] big = new float[300_001];
		badRequest("/api/vectors/reduce", Map.of("op", "SUM", "values", big),
				"values has 300001 elements, more than the limit of 300000 (sample.max-elements)");
		badRequest("/api/graphs/pagerank", "{\"nodes\":400000,\"edgesPerNode\":1}", "more than the limit of 300000");
	}

	@Test
	void repeatedRequestsHitEveryPoolAndLeaveNothingInUse() {
		SampleContract contract = contract();
		for (int i = 0; i < 2; i++) {
			contract.addAndSaxpy();
			contract.reductions();
			contract.pageRankWithDanglingNodes();
		}
		contract.nothingLeftInUse();
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
			.uri("/actuator/health")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.value((health) -> assertThat(health).as("no details to an anonymous client")
				.contains("\"gpumem\"")
				.doesNotContain("details", "path", "totalBytes"));
		assertThat(scrape()).contains("gpumem_pool_memory_bytes{device=\"0\",pool=\"device\"",
				"gpumem_pool_requests_total{device=\"0\",pool=\"reduction\"");
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
	void everyMetricTheDashboardAndTheRulesReadIsExported() throws IOException {
		contract().addAndSaxpy();
		Set<String> exported = scrape().lines()
			.filter((line) -> !line.isBlank() && !line.startsWith("#"))
			.map((line) -> line.split("[{ ]", 2)[0])
			.collect(Collectors.toSet());
		Path ops = Path.of("..", "ops");
		String rules = Files.readString(ops.resolve("prometheus/gpumem-rules.yml"));
		String dashboard = Files.readString(ops.resolve("grafana/gpumem-dashboard.json"));
		Set<String> recorded = Pattern.compile("record: (\\S+)").matcher(rules).results()
			.map((match) -> match.group(1))
			.collect(Collectors.toSet());
		Set<String> read = Pattern.compile("\\bgpumem[_:][a-z0-9_:]+").matcher(rules + dashboard).results()
			.map(MatchResult::group)
			.collect(Collectors.toCollection(TreeSet::new));
		assertThat(read).hasSizeGreaterThan(15);
		read.forEach((name) -> assertThat(name.contains(":") ? recorded : exported).as(name).contains(name));
	}

	@Test
	void transfersAndMissesAreObservedAndTimedUnderTheirNames() {
		contract().addAndSaxpy();
		assertThat(scrape()).contains(
				"gpumem_transfer_seconds_count{device=\"0\",direction=\"upload\",error=\"none\"}",
				"gpumem_transfer_seconds_count{device=\"0\",direction=\"download\",error=\"none\"}",
				"gpumem_acquire_seconds_count{device=\"0\",error=\"none\",pool=\"pinned\"}");
	}

	@Test
	void eightConcurrentClientsAllGetRightAnswersAndTheBooksBalance() {
		contract().concurrentClients(8, 15);
		this.pools.asMap().forEach((name, pool) -> {
			PoolStatistics stats = pool.statistics();
			assertThat(stats.inUseBuffers()).as("%s in use", name).isZero();
			assertThat(stats.cachedBytes()).as("%s cached = reserved", name).isEqualTo(stats.reservedBytes());
			assertThat(stats.requests()).as("%s requests", name).isEqualTo(stats.hits() + stats.misses());
		});
	}

	@Test
	void theShippedConfigurationIdleTrimsTheDeviceAndPinnedPools() {
		assertThat(this.properties.getDevicePool().getIdleTrimAfter()).isEqualTo(Duration.ofMinutes(5));
		assertThat(this.properties.getPinnedPool().getIdleTrimAfter()).isEqualTo(Duration.ofMinutes(5));
	}

	@Test
	void theContractNamesTheBackendItRunsOn() {
		assertThat(contract().backend()).isEqualTo("host");
	}

	private String scrape() {
		return this.client.get()
			.uri("/actuator/prometheus")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.returnResult()
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

}
