package io.gpumem.sample.vectors;

import java.util.List;
import java.util.Locale;

import org.springframework.stereotype.Service;

import io.gpumem.sample.ConditionalOnGpumem;
import io.gpumem.reduction.ReductionBuffer;
import io.gpumem.reduction.ReductionOp;
import io.gpumem.sample.Compute;
import io.gpumem.scope.MemoryScope;
import io.gpumem.scope.ScopedBuffer;
import io.gpumem.stream.GpuStream;
import io.gpumem.transfer.Transfer;
import io.gpumem.transfer.TransferPart;

/**
 * Vector operations on the device: inputs staged in through the pinned pool in one transfer, kernels on
 * device-pool buffers, results staged out, reductions through the reduction-buffer cache. All device work
 * of a request is on its stream, which closes (waiting for that work) before its buffers go back.
 */
@Service
@ConditionalOnGpumem
public class VectorService {

	private final Compute compute;

	public VectorService(Compute compute) {
		this.compute = compute;
	}

	/** {@code a + b}, element-wise. */
	public float[] add(float[] a, float[] b) {
		int n = checkPair("a", a, "b", b);
		return elementWise("add", a, b,
				(stream, x, y, out) -> this.compute.kernels().add(stream, x, y, out, n));
	}

	/** {@code alpha · x + y}, element-wise, with one rounding. */
	public float[] saxpy(float alpha, float[] x, float[] y) {
		int n = checkPair("x", x, "y", y);
		return elementWise("saxpy", x, y,
				(stream, xs, ys, out) -> this.compute.kernels().saxpy(stream, alpha, xs, ys, out, n));
	}

	/**
	 * The SUM, MIN or MAX of the values.
	 * @throws IllegalArgumentException for another op, or no values
	 */
	public float reduce(String op, float[] values) {
		ReductionOp reduction = parseOp(op);
		int n = checkVector("values", values);
		try (MemoryScope scope = MemoryScope.open("reduce", this.compute.devicePool());
				GpuStream stream = this.compute.backend().createStream();
				ReductionBuffer result = this.compute.reductions().acquire(float.class, 1, reduction, stream)) {
			ScopedBuffer input = scope.allocate(float.class, n);
			try (Transfer upload = this.compute.transfers()
				.uploadAsync(stream, List.of(TransferPart.of(values, input)))) {
				this.compute.kernels().reduce(stream, reduction, input, n, result);
				return result.readResult(0, stream).floatValue();
			}
		}
	}

	private float[] elementWise(String name, float[] left, float[] right, ElementWise kernel) {
		int n = left.length;
		float[] result = new float[n];
		try (MemoryScope scope = MemoryScope.open(name, this.compute.devicePool());
				GpuStream stream = this.compute.backend().createStream()) {
			ScopedBuffer a = scope.allocate(float.class, n);
			ScopedBuffer b = scope.allocate(float.class, n);
			ScopedBuffer out = scope.allocate(float.class, n);
			try (Transfer upload = this.compute.transfers().uploadAsync(stream,
					List.of(TransferPart.of(left, a), TransferPart.of(right, b)))) {
				kernel.enqueue(stream, a, b, out);
				this.compute.transfers().downloadAsync(stream, List.of(TransferPart.of(result, out))).await();
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
		this.compute.limits().checkSize(name, values.length);
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
