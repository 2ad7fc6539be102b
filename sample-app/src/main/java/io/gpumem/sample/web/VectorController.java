package io.gpumem.sample.web;

import java.util.Map;

import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import io.gpumem.sample.ConditionalOnGpumem;
import io.gpumem.sample.vectors.VectorService;

/** {@code /api/vectors}: element-wise add, SAXPY and reductions. */
@RestController
@ConditionalOnGpumem
class VectorController {

	private final VectorService vectors;

	VectorController(VectorService vectors) {
		this.vectors = vectors;
	}

	@PostMapping("/api/vectors/add")
	Map<String, float[]> add(@RequestBody AddRequest request) {
		return Map.of("result", this.vectors.add(request.a(), request.b()));
	}

	@PostMapping("/api/vectors/saxpy")
	Map<String, float[]> saxpy(@RequestBody SaxpyRequest request) {
		if (request.alpha() == null) {
			throw new IllegalArgumentException("alpha must be a number");
		}
		return Map.of("result", this.vectors.saxpy(request.alpha(), request.x(), request.y()));
	}

	@PostMapping("/api/vectors/reduce")
	Map<String, Float> reduce(@RequestBody ReduceRequest request) {
		return Map.of("result", this.vectors.reduce(request.op(), request.values()));
	}

	record AddRequest(float[] a, float[] b) {
	}

	record SaxpyRequest(Float alpha, float[] x, float[] y) {
	}

	record ReduceRequest(String op, float[] values) {
	}

}
