package io.gpumem.sample.web;

import java.io.IOException;
import java.util.Map;

import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

import io.gpumem.sample.ConditionalOnGpumem;
import io.gpumem.sample.SampleProperties;
import io.gpumem.sample.limits.HeapBudget;
import io.gpumem.sample.limits.OverloadedException;
import io.gpumem.sample.limits.PayloadTooLargeException;

/**
 * Bounds the API's request bodies before they are parsed: a declared length above
 * {@code sample.max-body-size} answers 413 without a byte read, a body that grows past it while read
 * (chunked) stops there, and every body reserves the heap its parsing takes from the {@link HeapBudget}
 * as it is read. The reservation is the request's to give back: here when it answers on its own thread,
 * by {@link AsyncRequests} when its work runs on another, once that work is over.
 */
@Component
@ConditionalOnGpumem
class RequestBodyLimitFilter extends OncePerRequestFilter {

	/** The request attribute that holds the request's {@link HeapBudget.Reservation}. */
	static final String RESERVATION = HeapBudget.Reservation.class.getName();

	/** Heap reserved at a time for a body of no declared length, as it is read. */
	private static final long CHUNK = 1024 * 1024;

	private final long maxBodySize;

	private final HeapBudget budget;

	private final JsonMapper json;

	RequestBodyLimitFilter(SampleProperties properties, HeapBudget budget, JsonMapper json) {
		this.maxBodySize = properties.maxBodySize().toBytes();
		this.budget = budget;
		this.json = json;
	}

	@Override
	protected boolean shouldNotFilter(HttpServletRequest request) {
		return !request.getRequestURI().startsWith("/api/");
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		long length = request.getContentLengthLong();
		if (length > this.maxBodySize) {
			reject(response, HttpStatus.PAYLOAD_TOO_LARGE, tooLarge("of " + length + " bytes ").getMessage());
			return;
		}
		HeapBudget.Reservation reservation;
		try {
			reservation = this.budget.reserve(Math.max(0, length) * HeapBudget.BYTES_PER_BODY_BYTE);
		}
		catch (PayloadTooLargeException ex) {
			reject(response, HttpStatus.PAYLOAD_TOO_LARGE, ex.getMessage());
			return;
		}
		catch (OverloadedException ex) {
			response.setHeader(HttpHeaders.RETRY_AFTER, ApiExceptionHandler.retryAfterSeconds(ex.retryAfter()));
			reject(response, HttpStatus.SERVICE_UNAVAILABLE, ex.getMessage());
			return;
		}
		request.setAttribute(RESERVATION, reservation);
		BoundedRequest bounded = new BoundedRequest(request, reservation);
		try {
			chain.doFilter(bounded, response);
		}
		finally {
			if (bounded.body != null && bounded.body.cutOff) {
				response.flushBuffer();
			}
			if (!request.isAsyncStarted()) {
				reservation.close();
			}
			else if (request.getAttribute(RESERVATION) != null) {
				request.getAsyncContext().addListener(new Release(reservation));
			}
		}
	}

	private PayloadTooLargeException tooLarge(String size) {
		return new PayloadTooLargeException("the request body " + size + "is larger than the limit of "
				+ this.maxBodySize + " bytes (sample.max-body-size)");
	}

	/**
	 * Answers with the error at once, its length declared and flushed, so that the client has the whole
	 * answer even when the container closes the connection on the body it sends on.
	 */
	private void reject(HttpServletResponse response, HttpStatus status, String message) throws IOException {
		byte[] body = this.json.writeValueAsBytes(Map.of("error", message));
		response.setStatus(status.value());
		response.setContentType(MediaType.APPLICATION_JSON_VALUE);
		response.setContentLength(body.length);
		response.getOutputStream().write(body);
		response.flushBuffer();
	}

	/** The request with its body counted as it is read. */
	private final class BoundedRequest extends HttpServletRequestWrapper {

		private final HeapBudget.Reservation reservation;

		private BoundedInputStream body;

		BoundedRequest(HttpServletRequest request, HeapBudget.Reservation reservation) {
			super(request);
			this.reservation = reservation;
		}

		@Override
		public ServletInputStream getInputStream() throws IOException {
			if (this.body == null) {
				this.body = new BoundedInputStream(super.getInputStream(), this.reservation);
			}
			return this.body;
		}

	}

	/**
	 * Counts the bytes read, stops past the limit, and reserves heap ahead of them. Once it has stopped a
	 * body, the answer is flushed before the container swallows or drops the rest of it.
	 */
	private final class BoundedInputStream extends ServletInputStream {

		private final ServletInputStream in;

		private final HeapBudget.Reservation reservation;

		private long read;

		private boolean cutOff;

		BoundedInputStream(ServletInputStream in, HeapBudget.Reservation reservation) {
			this.in = in;
			this.reservation = reservation;
		}

		@Override
		public int read() throws IOException {
			int b = this.in.read();
			if (b >= 0) {
				counted(1);
			}
			return b;
		}

		@Override
		public int read(byte[] buffer, int offset, int length) throws IOException {
			int n = this.in.read(buffer, offset, length);
			if (n > 0) {
				counted(n);
			}
			return n;
		}

		private void counted(int n) {
			this.read += n;
			try {
				if (this.read > RequestBodyLimitFilter.this.maxBodySize) {
					throw tooLarge("");
				}
				long needed = this.read * HeapBudget.BYTES_PER_BODY_BYTE - this.reservation.bytes();
				if (needed > 0) {
					this.reservation.grow(Math.max(needed, CHUNK * HeapBudget.BYTES_PER_BODY_BYTE));
				}
			}
			catch (PayloadTooLargeException | OverloadedException ex) {
				this.cutOff = true;
				throw ex;
			}
		}

		@Override
		public boolean isFinished() {
			return this.in.isFinished();
		}

		@Override
		public boolean isReady() {
			return this.in.isReady();
		}

		@Override
		public void setReadListener(ReadListener listener) {
			this.in.setReadListener(listener);
		}

	}

	/** Gives a request's heap back when its asynchronous work has answered. */
	private record Release(HeapBudget.Reservation reservation) implements AsyncListener {

		@Override
		public void onComplete(AsyncEvent event) {
			this.reservation.close();
		}

		@Override
		public void onTimeout(AsyncEvent event) {
		}

		@Override
		public void onError(AsyncEvent event) {
		}

		@Override
		public void onStartAsync(AsyncEvent event) {
		}

	}

}
