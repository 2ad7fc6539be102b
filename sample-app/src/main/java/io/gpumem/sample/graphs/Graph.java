package io.gpumem.sample.graphs;

import java.util.Arrays;
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

	/**
	 * A graph where every node has {@code edgesPerNode} out-edges to other nodes drawn at random from
	 * {@code seed}. It is built in two passes over the same random sequence, counting then placing the
	 * edges, so that it takes no heap beyond its own arrays.
	 */
	public static Graph generate(int nodes, int edgesPerNode, long seed) {
		int edges = Math.multiplyExact(nodes, edgesPerNode);
		int[] rowStart = new int[nodes + 1];
		SplittableRandom random = new SplittableRandom(seed);
		for (int u = 0; u < nodes; u++) {
			for (int k = 0; k < edgesPerNode; k++) {
				rowStart[target(random, u, nodes) + 1]++;
			}
		}
		for (int v = 0; v < nodes; v++) {
			rowStart[v + 1] += rowStart[v];
		}
		int[] fill = Arrays.copyOf(rowStart, nodes);
		int[] sources = new int[edges];
		random = new SplittableRandom(seed);
		for (int u = 0; u < nodes; u++) {
			for (int k = 0; k < edgesPerNode; k++) {
				sources[fill[target(random, u, nodes)]++] = u;
			}
		}
		int[] outDegree = new int[nodes];
		Arrays.fill(outDegree, edgesPerNode);
		return new Graph(nodes, rowStart, sources, outDegree);
	}

	/** Heap a graph of {@code nodes} and {@code edges} takes while built and ranked, with its ranks. */
	public static long heapBytes(long nodes, long edges) {
		return 5 * Integer.BYTES * nodes + Integer.BYTES * edges;
	}

	/** A node other than {@code u}, at random. */
	private static int target(SplittableRandom random, int u, int nodes) {
		int target = random.nextInt(nodes - 1);
		return (target >= u) ? target + 1 : target;
	}

}
