package io.gpumem.sample;

import java.util.Map;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;

/**
 * Vector addition on pooled device buffers. The full HTTP contract and the kernels come with the
 * sample service issue; the pools are shown by {@code /actuator/gpumem}.
 */
@RestController
class VectorController {

	private final StratifiedMemoryPool pool;

	VectorController(StratifiedMemoryPool pool) {
		this.pool = pool;
	}

	@PostMapping("/api/vectors/add")
	Map<String, float[]> add(@RequestBody AddRequest request) {
		float[] a = request.a();
		float[] b = request.b();
		if (a == null || b == null || a.length == 0 || a.length != b.length) {
			throw new IllegalArgumentException("a and b must be non-empty and of equal length: a has "
					+ ((a != null) ? a.length : 0) + " elements, b has " + ((b != null) ? b.length : 0));
		}
		long bytes = (long) a.length * Float.BYTES;
		float[] result = new float[a.length];
		try (PooledBuffer left = this.pool.acquire(bytes); PooledBuffer right = this.pool.acquire(bytes)) {
			left.copyFrom(a);
			right.copyFrom(b);
			float[] rightValues = new float[b.length];
			left.copyTo(result);
			right.copyTo(rightValues);
			for (int i = 0; i < result.length; i++) {
				result[i] += rightValues[i];
			}
			left.copyFrom(result);
			left.copyTo(result);
		}
		return Map.of("result", result);
	}

	@ExceptionHandler(IllegalArgumentException.class)
	@ResponseStatus(HttpStatus.BAD_REQUEST)
	Map<String, String> badRequest(IllegalArgumentException ex) {
		return Map.of("error", ex.getMessage());
	}

	record AddRequest(float[] a, float[] b) {
	}

}
