package io.gpumem.sample.graphs;

import java.util.Arrays;
import java.util.List;

import org.springframework.stereotype.Service;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.reduction.ReductionBuffer;
import io.gpumem.reduction.ReductionOp;
import io.gpumem.sample.Compute;
import io.gpumem.sample.ConditionalOnGpumem;
import io.gpumem.sample.limits.Deadline;
import io.gpumem.sample.limits.HeapBudget;
import io.gpumem.scope.MemoryScope;
import io.gpumem.scope.ScopedBuffer;
import io.gpumem.stream.GpuStream;
import io.gpumem.stream.StreamOrder;
import io.gpumem.transfer.Transfer;
import io.gpumem.transfer.TransferPart;

/**
 * PageRank by power iteration on the device: the graph and initial ranks go up in one transfer, every
 * buffer of the request lives in one scope, the dangling-rank sum of each iteration in a reduction
 * buffer, and the ranks come back at the end. Nodes without out-edges share their rank evenly. All device
 * work is on the request's stream, which closes (waiting for it) before the buffers go back.
 * <p>
 * A request is admitted for the device memory of its six buffers and a permit, and reserves the heap its graph takes,
 * before building it, and checks its deadline between iterations, waiting for the device every
 * {@value #SYNC_EVERY} iterations so that a stopped request has little work queued: its memory goes back within a
 * few iterations.
 */
@Service
@ConditionalOnGpumem
public class PageRankService {

	private static final int SYNC_EVERY = 8;

	private final Compute compute;

	private final HeapBudget heap;

	public PageRankService(Compute compute, HeapBudget heap) {
		this.compute = compute;
		this.heap = heap;
	}

	/**
	 * The ranks of the graph of the given edges.
	 * @param edges {@code [source, target]} pairs of node ids from 0
	 * @param nodes how many nodes, or {@code null} for one more than the largest id
	 * @throws IllegalArgumentException for no edges, an id out of range or too large a graph
	 */
	public float[] rank(Edges edges, Integer nodes, int iterations, float damping, Deadline deadline) {
		if (edges == null || edges.count() == 0) {
			throw new IllegalArgumentException("edges must be a non-empty array of [source, target] pairs");
		}
		this.compute.limits().checkSize("edges", edges.count());
		int[] from = edges.sources();
		int[] to = edges.targets();
		int largest = -1;
		for (int e = 0; e < from.length; e++) {
			largest = Math.max(largest, Math.max(from[e], to[e]));
		}
		long count = (nodes != null) ? nodes : largest + 1L;
		checkNodes(count);
		for (int e = 0; e < from.length; e++) {
			if (from[e] < 0 || from[e] >= count || to[e] < 0 || to[e] >= count) {
				throw new IllegalArgumentException("edge " + e + " [" + from[e] + ", " + to[e]
						+ "] names a node out of range: ids go from 0 to " + (count - 1));
			}
		}
		checkIterations(iterations, damping);
		try (GpuAdmission.Permit permit = admit(count, from.length, deadline);
				HeapBudget.Reservation graphHeap = this.heap.reserve(Graph.heapBytes(count, from.length))) {
			return rank(Graph.of((int) count, from, to), permit, iterations, damping, deadline);
		}
	}

	/** The ranks of a generated graph: {@code edgesPerNode} random out-edges per node, from {@code seed}. */
	public float[] rankGenerated(int nodes, int edgesPerNode, long seed, int iterations, float damping,
			Deadline deadline) {
		checkNodes(nodes);
		if (nodes < 2 || edgesPerNode < 0) {
			throw new IllegalArgumentException("a generated graph needs at least 2 nodes and edgesPerNode >= 0, not "
					+ nodes + " nodes and edgesPerNode " + edgesPerNode);
		}
		long edges = (long) nodes * edgesPerNode;
		this.compute.limits().checkSize("edges", edges);
		checkIterations(iterations, damping);
		try (GpuAdmission.Permit permit = admit(nodes, edges, deadline);
				HeapBudget.Reservation graphHeap = this.heap.reserve(Graph.heapBytes(nodes, edges))) {
			return rank(Graph.generate(nodes, edgesPerNode, seed), permit, iterations, damping, deadline);
		}
	}

	private void checkIterations(int iterations, float damping) {
		if (iterations < 1 || iterations > this.compute.limits().maxIterations()) {
			throw new IllegalArgumentException("iterations must be between 1 and " + this.compute.limits().maxIterations()
					+ " (sample.max-iterations), not " + iterations);
		}
		if (!(damping > 0 && damping < 1)) {
			throw new IllegalArgumentException("damping must lie strictly between 0 and 1, not " + damping);
		}
	}

	/**
	 * Admission for the device memory of the six buffers of a graph of {@code nodes} and {@code edges}, before the
	 * graph is built, so that a request the device cannot take in time costs no more than its body.
	 */
	private GpuAdmission.Permit admit(long nodes, long edges, Deadline deadline) {
		long vector = 4L * nodes;
		return this.compute.admit(deadline, vector, vector, vector, vector, vector + 4, 4L * Math.max(1, edges));
	}

	private float[] rank(Graph graph, GpuAdmission.Permit permit, int iterations, float damping, Deadline deadline) {
		deadline.check();
		int n = graph.nodes();
		float[] ranks = new float[n];
		Arrays.fill(ranks, 1f / n);
		try (MemoryScope scope = MemoryScope.open("pagerank", permit);
				GpuStream stream = this.compute.backend().createStream();
				ReductionBuffer dangling = this.compute.reductions().acquire(float.class, 1, ReductionOp.SUM, stream);
				StreamOrder.Binding ordered = StreamOrder.bind(stream)) {
			ScopedBuffer rank = scope.allocate(float.class, n);
			ScopedBuffer next = scope.allocate(float.class, n);
			ScopedBuffer contribution = scope.allocate(float.class, n);
			ScopedBuffer outDegree = scope.allocate(int.class, n);
			ScopedBuffer rowStart = scope.allocate(int.class, n + 1);
			ScopedBuffer sources = scope.allocate(int.class, Math.max(1, graph.sources().length));
			try (Transfer upload = this.compute.transfers().uploadAsync(stream,
					List.of(TransferPart.of(ranks, rank), TransferPart.of(graph.outDegree(), outDegree),
							TransferPart.of(graph.rowStart(), rowStart), TransferPart.of(graph.sources(), sources)))) {
				for (int i = 0; i < iterations; i++) {
					if (i % SYNC_EVERY == SYNC_EVERY - 1) {
						stream.synchronize();
					}
					deadline.check();
					stream.fill(dangling, 0, Float.BYTES, (byte) 0);
					this.compute.kernels().pageRankDangling(stream, rank, outDegree, n, dangling);
					this.compute.kernels().pageRankContribution(stream, rank, outDegree, contribution, n);
					this.compute.kernels().pageRankPull(stream, rowStart, sources, contribution, dangling, next, n, damping);
					ScopedBuffer swap = rank;
					rank = next;
					next = swap;
				}
				this.compute.transfers().downloadAsync(stream, List.of(TransferPart.of(ranks, rank))).await();
			}
		}
		return ranks;
	}

	private void checkNodes(long nodes) {
		if (nodes <= 0) {
			throw new IllegalArgumentException("a graph needs at least one node, not " + nodes);
		}
		this.compute.limits().checkSize("nodes", nodes);
	}

}
