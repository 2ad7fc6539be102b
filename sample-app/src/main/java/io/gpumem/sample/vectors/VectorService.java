package io.gpumem.sample.vectors;

import java.util.List;
import java.util.Locale;

import org.springframework.stereotype.Service;

import io.gpumem.backend.GpuBackend;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.reduction.ReductionBuffer;
import io.gpumem.reduction.ReductionBufferCache;
import io.gpumem.reduction.ReductionOp;
import io.gpumem.sample.SampleProperties;
import io.gpumem.sample.kernels.Kernels;
import io.gpumem.scope.MemoryScope;
import io.gpumem.scope.ScopedBuffer;
import io.gpumem.stream.GpuStream;
import io.gpumem.transfer.Transfer;
import io.gpumem.transfer.TransferPart;
import io.gpumem.transfer.Transfers;

/**
 * Vector operations on the device: inputs staged in through the pinned pool in one transfer, kernels on
 * device-pool buffers, results staged out, reductions through the reduction-buffer cache.
 */
@Service
public class VectorService {

	private final GpuBackend backend;

	private final StratifiedMemoryPool devicePool;

	private final Transfers transfers;

	private final ReductionBufferCache reductions;

	private final Kernels kernels;

	private final SampleProperties limits;

	public VectorService(GpuBackend backend, StratifiedMemoryPool devicePool, Transfers transfers,
			ReductionBufferCache reductions, Kernels kernels, SampleProperties limits) {
		this.backend = backend;
		this.devicePool = devicePool;
		this.transfers = transfers;
		this.reductions = reductions;
		this.kernels = kernels;
		this.limits = limits;
	}

	/** {@code a + b}, element-wise. */
	public float[] add(float[] a, float[] b) {
		int n = checkPair("a", a, "b", b);
		return elementWise("add", a, b, (stream, x, y, out) -> this.kernels.add(stream, x, y, out, n));
	}

	/** {@code alpha · x + y}, element-wise, with one rounding. */
	public float[] saxpy(float alpha, float[] x, float[] y) {
		int n = checkPair("x", x, "y", y);
		return elementWise("saxpy", x, y, (stream, xs, ys, out) -> this.kernels.saxpy(stream, alpha, xs, ys, out, n));
	}

	/**
	 * The SUM, MIN or MAX of the values.
	 * @throws IllegalArgumentException for another op, or no values
	 */
	public float reduce(String op, float[] values) {
		ReductionOp reduction = parseOp(op);
		int n = checkVector("values", values);
		try (GpuStream stream = this.backend.createStream();
				MemoryScope scope = MemoryScope.open("reduce", this.devicePool);
				ReductionBuffer result = this.reductions.acquire(float.class, 1, reduction)) {
			ScopedBuffer input = scope.allocate(float.class, n);
			try (Transfer upload = this.transfers.uploadAsync(stream, List.of(TransferPart.of(values, input)))) {
				this.kernels.reduce(stream, reduction, input, n, result);
				return result.readResult(0, stream).floatValue();
			}
		}
	}

	private float[] elementWise(String name, float[] left, float[] right, ElementWise kernel) {
		int n = left.length;
		float[] result = new float[n];
		try (GpuStream stream = this.backend.createStream(); MemoryScope scope = MemoryScope.open(name, this.devicePool)) {
			ScopedBuffer a = scope.allocate(float.class, n);
			ScopedBuffer b = scope.allocate(float.class, n);
			ScopedBuffer out = scope.allocate(float.class, n);
			try (Transfer upload = this.transfers.uploadAsync(stream,
					List.of(TransferPart.of(left, a), TransferPart.of(right, b)))) {
				kernel.enqueue(stream, a, b, out);
				this.transfers.downloadAsync(stream, List.of(TransferPart.of(result, out))).await();
			}
		}
		return result;
	}

	private int checkPair(String leftName, float[] left, String rightName, float[] right) {
		int n = checkVector(leftName, left);
		checkVector(rightName, right);
		if (left.length != right.length) {
			throw new IllegalArgumentException(leftName + " and " + rightName + " must be of equal length: "
					+ leftName + " has " + left.length + " elements, " + rightName + " has " + right.length);
		}
		return n;
	}

	private int checkVector(String name, float[] values) {
		if (values == null || values.length == 0) {
			throw new IllegalArgumentException(name + " must be a non-empty array of numbers");
		}
		this.limits.checkSize(name, values.length);
		return values.length;
	}

	private static ReductionOp parseOp(String op) {
		if (op != null) {
			switch (op.toUpperCase(Locale.ROOT)) {
				case "SUM":
					return ReductionOp.SUM;
				case "MIN":
					return ReductionOp.MIN;
				case "MAX":
					return ReductionOp.MAX;
				default:
			}
		}
		throw new IllegalArgumentException("unknown op '" + op + "': use SUM, MIN or MAX");
	}

	@FunctionalInterface
	private interface ElementWise {

		void enqueue(GpuStream stream, ScopedBuffer a, ScopedBuffer b, ScopedBuffer out);

	}

}
