package io.gpumem.autoconfigure.endpoint;

import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

import io.gpumem.autoconfigure.endpoint.GpumemEndpoint.PoolDetail;
import io.gpumem.autoconfigure.endpoint.GpumemEndpoint.TrimResult;

/**
 * The web side of {@link GpumemEndpoint}: 404 for an unknown pool, on reads, details, trims, sleeps and wakes alike
 * (as Boot's caches endpoint); 409 for a sleep the pool refuses.
 */
@EndpointWebExtension(endpoint = GpumemEndpoint.class)
public class GpumemEndpointWebExtension {

	private static final int STATUS_CONFLICT = 409;

	private final GpumemEndpoint delegate;

	public GpumemEndpointWebExtension(GpumemEndpoint delegate) {
		this.delegate = delegate;
	}

	@ReadOperation
	public WebEndpointResponse<PoolDetail> pool(@Selector String pool) {
		return found(this.delegate.pool(pool));
	}

	@ReadOperation
	public WebEndpointResponse<Object> detail(@Selector String pool, @Selector String detail) {
		return found(this.delegate.detail(pool, detail));
	}

	@WriteOperation
	public WebEndpointResponse<TrimResult> trimPool(@Selector String pool, @Nullable String keepBytes) {
		return found(this.delegate.trimPool(pool, keepBytes));
	}

	/** 409 where the pool cannot sleep now: it lends buffers in fixed segments. */
	@WriteOperation
	public WebEndpointResponse<Object> sleepOrWake(@Selector String pool, @Selector String action,
			@Nullable String mode) {
		try {
			return found(this.delegate.sleepOrWake(pool, action, mode));
		}
		catch (IllegalStateException ex) {
			return new WebEndpointResponse<>(Map.of("error", String.valueOf(ex.getMessage())),
					STATUS_CONFLICT);
		}
	}

	private static <T> WebEndpointResponse<T> found(@Nullable T body) {
		return (body != null) ? new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_OK)
				: new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
	}

}
