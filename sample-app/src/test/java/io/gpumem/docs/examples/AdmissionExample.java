package io.gpumem.docs.examples;

import java.time.Duration;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.pool.MemoryPool;
import io.gpumem.scope.MemoryScope;
import io.gpumem.scope.ScopedBuffer;

/** A request admitted for its memory before it touches the device, as docs/overload.md shows. */
class AdmissionExample {

	/** Fills three buffers of {@code n} floats drawn from one permit; answers the bytes lent on it. */
	static long threeVectors(GpuAdmission admission, MemoryPool pool, int n) {
		// tag::admission[]
		long footprint = pool.blockSize(4L * n) * 3;                       // what the pool lends for each buffer
		try (GpuAdmission.Permit permit = admission.enter(footprint, Duration.ofSeconds(2));
				MemoryScope scope = MemoryScope.open("saxpy", permit)) {    // or permit.acquire(bytes)
			ScopedBuffer x = scope.allocate(float.class, n);
			ScopedBuffer y = scope.allocate(float.class, n);
			ScopedBuffer out = scope.allocate(float.class, n);
			return permit.bytes() - permit.remainingBytes();
		}
		// end::admission[]
	}

}
