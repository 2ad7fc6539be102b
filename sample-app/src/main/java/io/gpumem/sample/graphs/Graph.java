package io.gpumem.sample.graphs;

import java.util.SplittableRandom;

/**
 * A directed graph in the form the PageRank kernels pull from: for each node its in-edges' sources
 * ({@code sources[rowStart[v] .. rowStart[v + 1])}) and its out-degree.
 *
 * @param nodes how many nodes, numbered from 0
 * @param rowStart where each node's in-edges start in {@code sources}, plus one entry for the end
 * @param sources the source of every edge, grouped by target
 * @param outDegree each node's number of out-edges
 */
public record Graph(int nodes, int[] rowStart, int[] sources, int[] outDegree) {

	/** The graph of the given edges ({@code [source, target]} pairs) over {@code nodes} nodes. */
	public static Graph of(int nodes, int[] edgeSources, int[] edgeTargets) {
		int edges = edgeSources.length;
		int[] rowStart = new int[nodes + 1];
		int[] outDegree = new int[nodes];
		for (int e = 0; e < edges; e++) {
			rowStart[edgeTargets[e] + 1]++;
			outDegree[edgeSources[e]]++;
		}
		for (int v = 0; v < nodes; v++) {
			rowStart[v + 1] += rowStart[v];
		}
		int[] fill = rowStart.clone();
		int[] sources = new int[edges];
		for (int e = 0; e < edges; e++) {
			sources[fill[edgeTargets[e]]++] = edgeSources[e];
		}
		return new Graph(nodes, rowStart, sources, outDegree);
	}

	/** A graph where every node has {@code edgesPerNode} out-edges to other nodes drawn at random from {@code seed}. */
	public static Graph generate(int nodes, int edgesPerNode, long seed) {
		SplittableRandom random = new SplittableRandom(seed);
		int edges = Math.multiplyExact(nodes, edgesPerNode);
		int[] from = new int[edges];
		int[] to = new int[edges];
		for (int u = 0, e = 0; u < nodes; u++) {
			for (int k = 0; k < edgesPerNode; k++, e++) {
				from[e] = u;
				int target = random.nextInt(nodes - 1);
				to[e] = (target >= u) ? target + 1 : target;
			}
		}
		return of(nodes, from, to);
	}

}
