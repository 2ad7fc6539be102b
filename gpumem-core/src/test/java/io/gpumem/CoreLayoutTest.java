package io.gpumem;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;

import org.junit.jupiter.api.Test;

import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The core's layout stays one a reader can follow: no cycle between its packages, as {@code jdeps} reads the
 * compiled classes.
 */
class CoreLayoutTest {

	private static final Pattern PACKAGE_EDGE = Pattern
		.compile("^\\s+(io\\.gpumem[\\w.]*)\\s+->\\s+(io\\.gpumem[\\w.]*)\\s", Pattern.MULTILINE);

	@Test
	void noPackageDependsOnItselfThroughAnother() throws URISyntaxException {
		Optional<ToolProvider> jdeps = ToolProvider.findFirst("jdeps");
		assumeTrue(jdeps.isPresent(), "this runtime has no jdeps");
		Path classes = Path.of(StratifiedMemoryPool.class.getProtectionDomain().getCodeSource().getLocation().toURI());
		StringWriter out = new StringWriter();
		int exit = jdeps.get().run(new PrintWriter(out), new PrintWriter(new StringWriter()), "-verbose:package",
				classes.toString());
		assertThat(exit).as("jdeps: %s", out).isZero();
		Map<String, Set<String>> uses = new TreeMap<>();
		Matcher edge = PACKAGE_EDGE.matcher(out.toString());
		while (edge.find()) {
			if (!edge.group(1).equals(edge.group(2))) {
				uses.computeIfAbsent(edge.group(1), (from) -> new TreeSet<>()).add(edge.group(2));
			}
		}
		assertThat(uses).as("packages read from jdeps").containsKeys("io.gpumem.pool", "io.gpumem.device");
		for (String from : uses.keySet()) {
			assertThat(reachable(uses, from)).as("packages %s reaches", from).doesNotContain(from);
		}
	}

	private static Set<String> reachable(Map<String, Set<String>> uses, String from) {
		Set<String> reached = new TreeSet<>();
		List<String> next = new ArrayList<>(uses.getOrDefault(from, Set.of()));
		while (!next.isEmpty()) {
			String pkg = next.remove(next.size() - 1);
			if (reached.add(pkg)) {
				next.addAll(uses.getOrDefault(pkg, Set.of()));
			}
		}
		return reached;
	}

}
