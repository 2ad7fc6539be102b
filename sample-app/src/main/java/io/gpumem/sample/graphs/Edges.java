package io.gpumem.sample.graphs;

/**
 * A graph's edges as two parallel arrays, the compact form a request's {@code [[source, target], …]}
 * is read into: 8 bytes an edge, where an array of pairs would take about 28.
 *
 * @param sources each edge's source node
 * @param targets each edge's target node
 */
public record Edges(int[] sources, int[] targets) {

	public Edges {
		if (sources.length != targets.length) {
			throw new IllegalArgumentException("sources and targets must be as many: " + sources.length + " and "
					+ targets.length);
		}
	}

	/** How many edges. */
	public int count() {
		return this.sources.length;
	}

}
