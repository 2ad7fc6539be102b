package io.gpumem.sample.web;

import java.util.Map;

import org.springframework.http.HttpStatus;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import io.gpumem.memory.GpuOutOfMemoryException;

/** Bad requests answer 400 naming the problem; running out of GPU memory answers 503 with the diagnostic. */
@RestControllerAdvice(basePackageClasses = ApiExceptionHandler.class)
class ApiExceptionHandler {

	@ExceptionHandler(IllegalArgumentException.class)
	@ResponseStatus(HttpStatus.BAD_REQUEST)
	Map<String, String> badRequest(IllegalArgumentException ex) {
		return Map.of("error", ex.getMessage());
	}

	@ExceptionHandler(HttpMessageNotReadableException.class)
	@ResponseStatus(HttpStatus.BAD_REQUEST)
	Map<String, String> unreadable(HttpMessageNotReadableException ex) {
		return Map.of("error", "the request body is not valid JSON of the expected shape: "
				+ ex.getMostSpecificCause().getMessage());
	}

	@ExceptionHandler(GpuOutOfMemoryException.class)
	@ResponseStatus(HttpStatus.SERVICE_UNAVAILABLE)
	Map<String, String> outOfMemory(GpuOutOfMemoryException ex) {
		return Map.of("error", ex.getMessage());
	}

}
