package io.gpumem.sample.vectors;

import java.util.List;
import java.util.Locale;

import org.springframework.stereotype.Service;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.reduction.ReductionBuffer;
import io.gpumem.reduction.ReductionOp;
import io.gpumem.sample.Compute;
import io.gpumem.sample.ConditionalOnGpumem;
import io.gpumem.sample.limits.Deadline;
import io.gpumem.scope.MemoryScope;
import io.gpumem.scope.ScopedBuffer;
import io.gpumem.stream.GpuStream;
import io.gpumem.stream.StreamOrder;
import io.gpumem.transfer.Transfer;
import io.gpumem.transfer.TransferPart;

/**
 * Vector operations on the device: inputs staged in through the pinned pool in one transfer, kernels on
 * device-pool buffers, results staged out, reductions through the reduction-buffer cache. All device work
 * of a request is on its stream, which closes (waiting for that work) before its buffers go back, and
 * its buffers are acquired in that stream's order ({@link StreamOrder}: with {@code cuda-async}, a block
 * allocated for the request is ready on its stream with no wait on the host). Each is admitted once, for the device
 * memory of its buffers and a permit, within the request's deadline. Inputs must be finite, and a
 * result that overflows float32 is refused rather than answered as a string.
 */
@Service
@ConditionalOnGpumem
public class VectorService {

	private final Compute compute;

	public VectorService(Compute compute) {
		this.compute = compute;
	}

	/** {@code a + b}, element-wise. */
	public float[] add(float[] a, float[] b, Deadline deadline) {
		int n = checkPair("a", a, "b", b);
		return finite("a + b", elementWise("add", a, b, deadline,
				(stream, x, y, out) -> this.compute.kernels().add(stream, x, y, out, n)));
	}

	/** {@code alpha · x + y}, element-wise, with one rounding. */
	public float[] saxpy(float alpha, float[] x, float[] y, Deadline deadline) {
		if (!Float.isFinite(alpha)) {
			throw new IllegalArgumentException("alpha must be a finite number, not " + alpha);
		}
		int n = checkPair("x", x, "y", y);
		return finite("alpha * x + y", elementWise("saxpy", x, y, deadline,
				(stream, xs, ys, out) -> this.compute.kernels().saxpy(stream, alpha, xs, ys, out, n)));
	}

	/**
	 * The SUM, MIN or MAX of the values.
	 * @throws IllegalArgumentException for another op, or no values
	 */
	public float reduce(String op, float[] values, Deadline deadline) {
		ReductionOp reduction = parseOp(op);
		int n = checkVector("values", values);
		try (GpuAdmission.Permit permit = this.compute.admit(deadline, Float.BYTES * (long) n);
				MemoryScope scope = MemoryScope.open("reduce", permit);
				GpuStream stream = this.compute.backend().createStream();
				ReductionBuffer result = this.compute.reductions().acquire(float.class, 1, reduction, stream);
				StreamOrder.Binding ordered = StreamOrder.bind(stream)) {
			ScopedBuffer input = scope.allocate(float.class, n);
			try (Transfer upload = this.compute.transfers()
				.uploadAsync(stream, List.of(TransferPart.of(values, input)))) {
				this.compute.kernels().reduce(stream, reduction, input, n, result);
				float value = result.readResult(0, stream).floatValue();
				if (!Float.isFinite(value)) {
					throw new ArithmeticException(reduction + " of the values overflows float32: the result would be "
							+ value);
				}
				return value;
			}
		}
	}

	private float[] elementWise(String name, float[] left, float[] right, Deadline deadline, ElementWise kernel) {
		int n = left.length;
		float[] result = new float[n];
		long vector = Float.BYTES * (long) n;
		try (GpuAdmission.Permit permit = this.compute.admit(deadline, vector, vector, vector);
				MemoryScope scope = MemoryScope.open(name, permit);
				GpuStream stream = this.compute.backend().createStream();
				StreamOrder.Binding ordered = StreamOrder.bind(stream)) {
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
		for (int i = 0; i < values.length; i++) {
			if (!Float.isFinite(values[i])) {
				throw new IllegalArgumentException(name + "[" + i + "] is " + values[i] + ": numbers must be finite");
			}
		}
		return values.length;
	}

	/**
	 * Returns {@code result} if every element is finite.
	 * @throws ArithmeticException naming {@code what} and the first element that overflowed float32
	 */
	private static float[] finite(String what, float[] result) {
		for (int i = 0; i < result.length; i++) {
			if (!Float.isFinite(result[i])) {
				throw new ArithmeticException(what + " overflows float32" + ((result.length > 1) ? " at element " + i : "")
						+ ": the result would be " + result[i]);
			}
		}
		return result;
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
