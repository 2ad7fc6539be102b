package io.gpumem.docs.examples;

import java.time.Duration;

import io.gpumem.pool.MemoryClaim;
import io.gpumem.pool.MemoryPool;
import io.gpumem.scope.MemoryScope;
import io.gpumem.scope.ScopedBuffer;

/** A request that claims its memory before it touches the device, as docs/overload.md shows. */
class ClaimExample {

	/** Fills three buffers of {@code n} floats drawn from one claim; answers the bytes claimed. */
	static long threeVectors(MemoryPool pool, int n) {
		// tag::claim[]
		long footprint = pool.blockSize(4L * n) * 3;                   // what the pool lends for each buffer
		try (MemoryClaim claim = pool.claim(footprint, Duration.ofSeconds(2));
				MemoryScope scope = MemoryScope.open("saxpy", claim)) { // or claim.acquire(bytes)
			ScopedBuffer x = scope.allocate(float.class, n);
			ScopedBuffer y = scope.allocate(float.class, n);
			ScopedBuffer out = scope.allocate(float.class, n);
			return claim.bytes() - claim.remainingBytes();
		}
		// end::claim[]
	}

}
