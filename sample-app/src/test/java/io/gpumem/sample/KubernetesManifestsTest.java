package io.gpumem.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.web.server.Shutdown;
import org.springframework.boot.web.server.autoconfigure.ServerProperties;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.PropertySourcesPropertyResolver;
import org.springframework.core.env.SimpleCommandLinePropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Kubernetes manifests in {@code ops/kubernetes} and the scrape configuration in {@code ops/prometheus}, held
 * against the sample started with the Deployment's environment: every probe answers 200 on the port it names, the
 * Service reaches the API, and Prometheus's relabelling keeps one target per pod, whose scrape has gpumem's metrics.
 */
class KubernetesManifestsTest {

	private static final Path OPS = Path.of("..", "ops");

	private static final HttpClient HTTP = HttpClient.newHttpClient();

	private static List<Map<String, Object>> objects;

	private static Map<String, Object> deployment;

	private static Map<String, Object> container;

	/** Each port number the manifest has the sample listen on, to the port it listens on in this test. */
	private static final Map<Integer, Integer> listening = new LinkedHashMap<>();

	private static ConfigurableApplicationContext context;

	@BeforeAll
	static void startTheSampleAsTheDeploymentDoes() throws IOException {
		objects = new ArrayList<>();
		try (Stream<Path> files = Files.list(OPS.resolve("kubernetes"))) {
			for (Path file : files.filter((path) -> path.toString().matches(".*\\.ya?ml")).sorted().toList()) {
				yaml(file).forEach((document) -> objects.add(map(document, file.toString())));
			}
		}
		List<Map<String, Object>> deployments = objects.stream()
			.filter((object) -> "Deployment".equals(object.get("kind")))
			.toList();
		assertThat(deployments).as("Deployments in ops/kubernetes").hasSize(1);
		deployment = deployments.get(0);
		List<Map<String, Object>> containers = maps(path(deployment, "spec", "template", "spec"), "containers");
		assertThat(containers).as("the Deployment's containers").hasSize(1);
		container = containers.get(0);

		Map<String, Object> env = new LinkedHashMap<>();
		maps(container, "env").forEach((variable) -> env.put((String) variable.get("name"), variable.get("value")));
		String[] args = list(container, "args").stream().map(String::valueOf).toArray(String[]::new);
		MutablePropertySources manifest = new MutablePropertySources();
		manifest.addLast(new SimpleCommandLinePropertySource("deployment-args", args));
		manifest.addLast(new SystemEnvironmentPropertySource(
				"deployment-" + StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, env));
		PropertySourcesPropertyResolver resolver = new PropertySourcesPropertyResolver(manifest);
		int serverPort = resolver.getProperty("server.port", Integer.class, 8080);
		Integer managementPort = resolver.getProperty("management.server.port", Integer.class);

		Map<String, Object> overrides = new LinkedHashMap<>();
		overrides.put("server.port", 0);
		if (managementPort != null) {
			overrides.put("management.server.port", 0);
		}
		overrides.put("gpumem.backend", "host"); // in place of the GPU the Deployment asks for
		overrides.put("gpumem.host.capacity", "64MB");
		StandardEnvironment environment = new StandardEnvironment();
		manifest.forEach(environment.getPropertySources()::addFirst);
		environment.getPropertySources().addFirst(new MapPropertySource("test-ports-and-backend", overrides));
		context = new SpringApplicationBuilder(SampleApplication.class).main(SampleApplication.class)
			.environment(environment)
			.run();

		listening.put(serverPort, context.getEnvironment().getRequiredProperty("local.server.port", Integer.class));
		if (managementPort != null) {
			listening.put(managementPort,
					context.getEnvironment().getRequiredProperty("local.management.port", Integer.class));
		}
	}

	@AfterAll
	static void stop() {
		if (context != null) {
			context.close();
		}
	}

	@Test
	void everyDocumentIsANamedKubernetesObject() {
		assertThat(objects).extracting((object) -> object.get("kind")).contains("Deployment", "Service");
		assertThat(objects).allSatisfy((object) -> {
			assertThat(object.get("apiVersion")).as("apiVersion").isInstanceOf(String.class);
			assertThat(object.get("kind")).as("kind").isInstanceOf(String.class);
			assertThat(path(object, "metadata").get("name")).as("metadata.name of a %s", object.get("kind"))
				.asString()
				.matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
		});
		Map<String, Object> selector = path(deployment, "spec", "selector", "matchLabels");
		assertThat(path(deployment, "spec", "template", "metadata", "labels")).containsAllEntriesOf(selector);
		assertThat(path(container, "resources", "limits")).containsEntry("nvidia.com/gpu", 1);
	}

	@Test
	void everyProbeAnswers200OnThePortItNames() throws Exception {
		List<String> probes = List.of("startupProbe", "livenessProbe", "readinessProbe");
		assertThat(container).as("the container's probes").containsKeys(probes.toArray(String[]::new));
		for (String probe : probes) {
			Map<String, Object> get = path(container, probe, "httpGet");
			String path = (String) get.get("path");
			HttpResponse<String> answer = get(port(get.get("port")), path);
			assertThat(answer.statusCode()).as("%s GET %s on port %s: %s", probe, path, get.get("port"), answer.body())
				.isEqualTo(200);
		}
	}

	@Test
	void theServiceSelectsTheDeploymentsPodsAndItsTargetPortServesTheApi() throws Exception {
		Map<String, Object> service = objects.stream()
			.filter((object) -> "Service".equals(object.get("kind")))
			.findFirst()
			.orElseThrow();
		Map<String, Object> labels = path(deployment, "spec", "template", "metadata", "labels");
		assertThat(labels).containsAllEntriesOf(path(service, "spec", "selector"));
		for (Map<String, Object> port : maps(path(service, "spec"), "ports")) {
			assertThat(port.get("targetPort")).as("targetPort %s is a container port's name", port.get("targetPort"))
				.isIn(maps(container, "ports").stream().map((declared) -> declared.get("name")).toList());
			HttpResponse<String> answer = post(port(port.get("targetPort")), "/api/vectors/add",
					"{\"a\":[1,2],\"b\":[3,4]}");
			assertThat(answer.statusCode()).as("the Service's port %s: %s", port.get("name"), answer.body())
				.isEqualTo(200);
			assertThat(answer.body()).contains("[4.0,6.0]");
		}
	}

	@Test
	void prometheusKeepsOneTargetPerPodAndItsScrapeHasGpumemMetrics() throws Exception {
		Path file = OPS.resolve("prometheus/prometheus-kubernetes.yml");
		Map<String, Object> config = map(yaml(file).get(0), file.toString());
		assertThat(list(config, "rule_files")).isNotEmpty()
			.allSatisfy((rules) -> assertThat(file.resolveSibling(String.valueOf(rules))).isRegularFile());
		Map<String, Object> job = maps(config, "scrape_configs").get(0);
		assertThat(maps(job, "kubernetes_sd_configs")).extracting((sd) -> sd.get("role")).containsExactly("pod");

		List<Map<String, String>> kept = new ArrayList<>();
		for (Map<String, Object> port : maps(container, "ports")) {
			Map<String, String> target = podTarget(job, port);
			if (relabel(target, maps(job, "relabel_configs"))) {
				kept.add(target);
			}
		}
		assertThat(kept).as("targets kept of the pod's ports").hasSize(1);
		Map<String, String> target = kept.get(0);
		int port = Integer.parseInt(target.get("__address__").replaceFirst(".*:", ""));
		HttpResponse<String> scrape = get(port(port), target.get("__metrics_path__"));
		assertThat(scrape.statusCode()).as("the scrape of %s", target).isEqualTo(200);
		assertThat(scrape.body()).contains("gpumem_pool_memory_bytes{", "gpumem_pressure_level{");
	}

	@Test
	void theGracePeriodOutlastsThePreStopSleepAndAGracefulShutdown() {
		assertThat(context.getBean(ServerProperties.class).getShutdown()).isEqualTo(Shutdown.GRACEFUL);
		Duration phase = Binder.get(context.getEnvironment())
			.bind("spring.lifecycle.timeout-per-shutdown-phase", Duration.class)
			.orElse(Duration.ofSeconds(30));
		int preStop = (Integer) path(container, "lifecycle", "preStop", "sleep").get("seconds");
		Object grace = path(deployment, "spec", "template", "spec").get("terminationGracePeriodSeconds");
		assertThat(grace).as("terminationGracePeriodSeconds").isInstanceOf(Integer.class);
		assertThat((Integer) grace).isGreaterThan(preStop + (int) phase.toSeconds());
	}

	/** What Kubernetes service discovery (role pod) gives Prometheus for one of the Deployment's container ports. */
	private static Map<String, String> podTarget(Map<String, Object> job, Map<String, Object> port) {
		Map<String, String> target = new LinkedHashMap<>();
		Map<String, Object> metadata = path(deployment, "spec", "template", "metadata");
		target.put("__address__", "10.0.0.1:" + port.get("containerPort"));
		target.put("__metrics_path__", String.valueOf(job.getOrDefault("metrics_path", "/metrics")));
		target.put("__scheme__", "http");
		target.put("__meta_kubernetes_namespace", "default");
		target.put("__meta_kubernetes_pod_name", path(deployment, "metadata").get("name") + "-0");
		target.put("__meta_kubernetes_pod_container_name", String.valueOf(container.get("name")));
		target.put("__meta_kubernetes_pod_container_port_name", String.valueOf(port.getOrDefault("name", "")));
		target.put("__meta_kubernetes_pod_container_port_number", String.valueOf(port.get("containerPort")));
		target.put("__meta_kubernetes_pod_container_port_protocol",
				String.valueOf(port.getOrDefault("protocol", "TCP")));
		for (String kind : List.of("label", "annotation")) {
			Object entries = metadata.getOrDefault(kind + "s", Map.of());
			map(entries, kind + "s").forEach((name, value) -> {
				String label = name.replaceAll("[^a-zA-Z0-9_]", "_");
				target.put("__meta_kubernetes_pod_" + kind + "_" + label, String.valueOf(value));
				target.put("__meta_kubernetes_pod_" + kind + "present_" + label, "true");
			});
		}
		return target;
	}

	/** Prometheus's relabelling of a target, for the actions the scrape configuration uses; false when dropped. */
	private static boolean relabel(Map<String, String> target, List<Map<String, Object>> configs) {
		for (Map<String, Object> config : configs) {
			assertThat(config.keySet()).as("a relabelling's keys")
				.isSubsetOf("source_labels", "separator", "regex", "target_label", "replacement", "action");
			String action = String.valueOf(config.getOrDefault("action", "replace"));
			String value = list(config, "source_labels").stream()
				.map((label) -> target.getOrDefault(String.valueOf(label), ""))
				.reduce((a, b) -> a + config.getOrDefault("separator", ";") + b)
				.orElse("");
			Matcher matcher = Pattern.compile("^(?:" + config.getOrDefault("regex", "(.*)") + ")$").matcher(value);
			switch (action) {
				case "keep" -> {
					if (!matcher.matches()) {
						return false;
					}
				}
				case "drop" -> {
					if (matcher.matches()) {
						return false;
					}
				}
				case "replace" -> {
					if (matcher.matches()) {
						String replacement = String.valueOf(config.getOrDefault("replacement", "$1"))
							.replaceAll("\\$\\{(\\d+)}", "\\$$1");
						target.put(String.valueOf(config.get("target_label")), matcher.replaceFirst(replacement));
					}
				}
				default -> throw new IllegalArgumentException("relabel action '" + action + "' is not simulated here");
			}
		}
		return true;
	}

	/** The port the sample listens on in this test for a container port of the manifest, by name or number. */
	private static int port(Object nameOrNumber) {
		Integer number = (nameOrNumber instanceof Integer declared) ? declared
				: maps(container, "ports").stream()
					.filter((port) -> nameOrNumber.equals(port.get("name")))
					.map((port) -> (Integer) port.get("containerPort"))
					.findFirst()
					.orElse(null);
		assertThat(number).as("container port named '%s'", nameOrNumber).isNotNull();
		assertThat(listening).as("the ports the sample listens on").containsKey(number);
		return listening.get(number);
	}

	private static HttpResponse<String> get(int port, String path) throws Exception {
		return HTTP.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

	private static HttpResponse<String> post(int port, String path, String json) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json))
			.build();
		return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private static List<Object> yaml(Path file) throws IOException {
		List<Object> documents = new ArrayList<>();
		new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(Files.readString(file)).forEach(documents::add);
		return documents;
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> map(Object node, String what) {
		assertThat(node).as(what).isInstanceOf(Map.class);
		return (Map<String, Object>) node;
	}

	private static Map<String, Object> path(Map<String, Object> node, String... keys) {
		Map<String, Object> at = node;
		for (String key : keys) {
			at = map(at.get(key), key);
		}
		return at;
	}

	@SuppressWarnings("unchecked")
	private static List<Object> list(Map<String, Object> node, String key) {
		Object value = node.get(key);
		if (value == null) {
			return List.of();
		}
		assertThat(value).as(key).isInstanceOf(List.class);
		return (List<Object>) value;
	}

	private static List<Map<String, Object>> maps(Map<String, Object> node, String key) {
		return list(node, key).stream().map((item) -> map(item, key)).toList();
	}

}
