package io.gpumem.sample.web;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import tools.jackson.databind.annotation.JsonDeserialize;

import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;

import io.gpumem.sample.ConditionalOnGpumem;
import io.gpumem.sample.graphs.Edges;
import io.gpumem.sample.graphs.PageRankService;

/** {@code /api/graphs/pagerank}: PageRank of explicit edges, or of a generated graph with its ten best nodes. */
@RestController
@ConditionalOnGpumem
class GraphController {

	private static final int TOP = 10;

	private final PageRankService pageRank;

	private final AsyncRequests requests;

	GraphController(PageRankService pageRank, AsyncRequests requests) {
		this.pageRank = pageRank;
		this.requests = requests;
	}

	@PostMapping("/api/graphs/pagerank")
	DeferredResult<Map<String, Object>> pageRank(@RequestBody PageRankRequest request) {
		int iterations = (request.iterations() != null) ? request.iterations() : 50;
		float damping = (request.damping() != null) ? request.damping() : 0.85f;
		boolean generated = request.edges() == null && request.nodes() != null && request.edgesPerNode() != null;
		if (request.edges() == null && !generated) {
			throw new IllegalArgumentException(
					"give either edges, or nodes and edgesPerNode (and a seed) for a generated graph");
		}
		return this.requests.run((deadline) -> {
			Map<String, Object> answer = new LinkedHashMap<>();
			if (generated) {
				answer.put("top", top(this.pageRank.rankGenerated(request.nodes(), request.edgesPerNode(),
						(request.seed() != null) ? request.seed() : 0L, iterations, damping, deadline)));
			}
			else {
				answer.put("ranks", this.pageRank.rank(request.edges(), request.nodes(), iterations, damping, deadline));
			}
			answer.put("iterations", iterations);
			return answer;
		});
	}

	/** The best nodes, highest rank first and the lower id first among equals, in one pass over the ranks. */
	private static List<RankedNode> top(float[] ranks) {
		int[] best = new int[Math.min(TOP, ranks.length)];
		int count = 0;
		for (int node = 0; node < ranks.length; node++) {
			if (count < best.length || ranks[node] > ranks[best[count - 1]]) {
				int at = Math.min(count, best.length - 1);
				while (at > 0 && ranks[node] > ranks[best[at - 1]]) {
					best[at] = best[at - 1];
					at--;
				}
				best[at] = node;
				count = Math.min(count + 1, best.length);
			}
		}
		List<RankedNode> top = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			top.add(new RankedNode(best[i], ranks[best[i]]));
		}
		return top;
	}

	/** A node of the answer's best, with its rank: a record, so that its fields are answered in this order. */
	record RankedNode(int node, float rank) {
	}

	record PageRankRequest(@JsonDeserialize(using = EdgesDeserializer.class) Edges edges, Integer nodes,
			Integer edgesPerNode, Long seed, Integer iterations, Float damping) {
	}

}
