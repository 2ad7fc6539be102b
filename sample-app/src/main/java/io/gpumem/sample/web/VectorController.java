package io.gpumem.sample.web;

import java.util.Map;

import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;

import io.gpumem.sample.ConditionalOnGpumem;
import io.gpumem.sample.vectors.VectorService;

/** {@code /api/vectors}: element-wise add, SAXPY and reductions. */
@RestController
@ConditionalOnGpumem
class VectorController {

	private final VectorService vectors;

	private final AsyncRequests requests;

	VectorController(VectorService vectors, AsyncRequests requests) {
		this.vectors = vectors;
		this.requests = requests;
	}

	@PostMapping("/api/vectors/add")
	DeferredResult<Map<String, float[]>> add(@RequestBody AddRequest request) {
		return this.requests.run((deadline) -> Map.of("result", this.vectors.add(request.a(), request.b(), deadline)));
	}

	@PostMapping("/api/vectors/saxpy")
	DeferredResult<Map<String, float[]>> saxpy(@RequestBody SaxpyRequest request) {
		if (request.alpha() == null) {
			throw new IllegalArgumentException("alpha must be a number");
		}
		return this.requests.run((deadline) -> Map.of("result",
				this.vectors.saxpy(request.alpha(), request.x(), request.y(), deadline)));
	}

	@PostMapping("/api/vectors/reduce")
	DeferredResult<Map<String, Float>> reduce(@RequestBody ReduceRequest request) {
		return this.requests.run(
				(deadline) -> Map.of("result", this.vectors.reduce(request.op(), request.values(), deadline)));
	}

	record AddRequest(float[] a, float[] b) {
	}

	record SaxpyRequest(Float alpha, float[] x, float[] y) {
	}

	record ReduceRequest(String op, float[] values) {
	}

}
