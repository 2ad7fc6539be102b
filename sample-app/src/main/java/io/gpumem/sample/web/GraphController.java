package io.gpumem.sample.web;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import io.gpumem.sample.ConditionalOnGpumem;
import io.gpumem.sample.graphs.PageRankService;

/** {@code /api/graphs/pagerank}: PageRank of explicit edges, or of a generated graph with its ten best nodes. */
@RestController
@ConditionalOnGpumem
class GraphController {

	private static final int TOP = 10;

	private final PageRankService pageRank;

	GraphController(PageRankService pageRank) {
		this.pageRank = pageRank;
	}

	@PostMapping("/api/graphs/pagerank")
	Map<String, Object> pageRank(@RequestBody PageRankRequest request) {
		int iterations = (request.iterations() != null) ? request.iterations() : 50;
		float damping = (request.damping() != null) ? request.damping() : 0.85f;
		Map<String, Object> answer = new LinkedHashMap<>();
		if (request.edges() != null) {
			answer.put("ranks", this.pageRank.rank(request.edges(), request.nodes(), iterations, damping));
		}
		else if (request.nodes() != null && request.edgesPerNode() != null) {
			float[] ranks = this.pageRank.rankGenerated(request.nodes(), request.edgesPerNode(),
					(request.seed() != null) ? request.seed() : 0L, iterations, damping);
			answer.put("top", top(ranks));
		}
		else {
			throw new IllegalArgumentException(
					"give either edges, or nodes and edgesPerNode (and a seed) for a generated graph");
		}
		answer.put("iterations", iterations);
		return answer;
	}

	private static List<Map<String, Object>> top(float[] ranks) {
		List<Map<String, Object>> best = new ArrayList<>();
		IntStream.range(0, ranks.length)
			.boxed()
			.sorted(Comparator.comparingDouble((Integer node) -> ranks[node]).reversed()
				.thenComparing(Comparator.naturalOrder()))
			.limit(TOP)
			.forEach((node) -> best.add(Map.of("node", node, "rank", ranks[node])));
		return best;
	}

	record PageRankRequest(int[][] edges, Integer nodes, Integer edgesPerNode, Long seed, Integer iterations,
			Float damping) {
	}

}
