package io.gpumem.sample;

import java.util.Arrays;

import io.gpumem.sample.graphs.Graph;

/** PageRank the straightforward way, in double precision, to check the service against. */
final class PageRankReference {

	private PageRankReference() {
	}

	static double[] ranks(int nodes, int[][] edges, int iterations, double damping) {
		int[] outDegree = new int[nodes];
		for (int[] edge : edges) {
			outDegree[edge[0]]++;
		}
		double[] rank = new double[nodes];
		Arrays.fill(rank, 1.0 / nodes);
		for (int i = 0; i < iterations; i++) {
			double dangling = 0;
			for (int u = 0; u < nodes; u++) {
				if (outDegree[u] == 0) {
					dangling += rank[u];
				}
			}
			double[] next = new double[nodes];
			Arrays.fill(next, (1 - damping) / nodes + damping * dangling / nodes);
			for (int[] edge : edges) {
				next[edge[1]] += damping * rank[edge[0]] / outDegree[edge[0]];
			}
			rank = next;
		}
		return rank;
	}

	/** The edges of a graph, as {@code [source, target]} pairs. */
	static int[][] edges(Graph graph) {
		int[][] edges = new int[graph.sources().length][];
		for (int v = 0, e = 0; v < graph.nodes(); v++) {
			for (int k = graph.rowStart()[v]; k < graph.rowStart()[v + 1]; k++) {
				edges[e++] = new int[] { graph.sources()[k], v };
			}
		}
		return edges;
	}

}
