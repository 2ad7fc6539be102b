package io.gpumem.sample.web;

import java.time.Duration;
import java.util.Map;

import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import io.gpumem.admission.GpuAdmissionException;
import io.gpumem.memory.GpuDeviceFailedException;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.sample.limits.DeadlineExceededException;
import io.gpumem.sample.limits.OverloadedException;
import io.gpumem.sample.limits.PayloadTooLargeException;

/**
 * Every failure a request can meet answers with its status and an {@code error} that names the problem:
 * 400 for bad input, 413 for a request larger than the service takes, 422 for a result float32 cannot
 * hold, and 503 when the service cannot serve it now (heap, workers, GPU admission or memory, a device that
 * failed for good), with {@code Retry-After} where waiting helps.
 */
@RestControllerAdvice(basePackageClasses = ApiExceptionHandler.class)
@Order(Ordered.HIGHEST_PRECEDENCE)
class ApiExceptionHandler {

	/** How long a client should wait after running into a full device. */
	private static final Duration OUT_OF_MEMORY_RETRY = Duration.ofSeconds(1);

	private final JsonMapper json;

	ApiExceptionHandler(JsonMapper json) {
		this.json = json;
	}

	@ExceptionHandler(IllegalArgumentException.class)
	ResponseEntity<byte[]> badRequest(IllegalArgumentException ex) {
		return error(HttpStatus.BAD_REQUEST, ex.getMessage());
	}

	@ExceptionHandler(ArithmeticException.class)
	ResponseEntity<byte[]> overflow(ArithmeticException ex) {
		return error(HttpStatus.UNPROCESSABLE_CONTENT, ex.getMessage());
	}

	@ExceptionHandler(HttpMessageNotReadableException.class)
	ResponseEntity<byte[]> unreadable(HttpMessageNotReadableException ex) {
		Throwable cause = ex.getMostSpecificCause();
		if (cause instanceof PayloadTooLargeException tooLarge) {
			return tooLarge(tooLarge);
		}
		if (cause instanceof OverloadedException overloaded) {
			return overloaded(overloaded);
		}
		if (cause == ex) {
			return error(HttpStatus.BAD_REQUEST, "the request needs a JSON body");
		}
		return error(HttpStatus.BAD_REQUEST,
				"the request body is not valid JSON of the expected shape: " + cause.getMessage());
	}

	@ExceptionHandler(PayloadTooLargeException.class)
	ResponseEntity<byte[]> tooLarge(PayloadTooLargeException ex) {
		return error(HttpStatus.PAYLOAD_TOO_LARGE, ex.getMessage());
	}

	@ExceptionHandler(OverloadedException.class)
	ResponseEntity<byte[]> overloaded(OverloadedException ex) {
		return unavailable(ex.getMessage(), ex.retryAfter());
	}

	@ExceptionHandler(GpuAdmissionException.class)
	ResponseEntity<byte[]> notAdmitted(GpuAdmissionException ex) {
		return unavailable(ex.getMessage(), ex.retryAfter());
	}

	@ExceptionHandler(GpuOutOfMemoryException.class)
	ResponseEntity<byte[]> outOfMemory(GpuOutOfMemoryException ex) {
		return unavailable(ex.getMessage(), OUT_OF_MEMORY_RETRY);
	}

	/** No {@code Retry-After}: the device stays failed until the process restarts, which its liveness probe asks for. */
	@ExceptionHandler(GpuDeviceFailedException.class)
	ResponseEntity<byte[]> deviceFailed(GpuDeviceFailedException ex) {
		return error(HttpStatus.SERVICE_UNAVAILABLE, ex.getMessage());
	}

	@ExceptionHandler(DeadlineExceededException.class)
	ResponseEntity<byte[]> deadlineExceeded(DeadlineExceededException ex) {
		return error(HttpStatus.SERVICE_UNAVAILABLE, ex.getMessage());
	}

	/** A {@code Retry-After} value: whole seconds, at least one. */
	static String retryAfterSeconds(Duration retryAfter) {
		return Long.toString(Math.max(1, (retryAfter.toMillis() + 999) / 1000));
	}

	private ResponseEntity<byte[]> unavailable(String message, Duration retryAfter) {
		return error(HttpStatus.SERVICE_UNAVAILABLE, message, retryAfterSeconds(retryAfter));
	}

	private ResponseEntity<byte[]> error(HttpStatus status, String message) {
		return error(status, message, null);
	}

	/** The answer with its length declared, so that it arrives whole even if the connection closes after it. */
	private ResponseEntity<byte[]> error(HttpStatus status, String message, String retryAfter) {
		ResponseEntity.BodyBuilder answer = ResponseEntity.status(status).contentType(MediaType.APPLICATION_JSON);
		if (retryAfter != null) {
			answer.header(HttpHeaders.RETRY_AFTER, retryAfter);
		}
		return answer.body(this.json.writeValueAsBytes(Map.of("error", message)));
	}

}
