package io.gpumem.sample.web;

import java.time.Duration;
import java.util.function.Function;

import jakarta.servlet.http.HttpServletRequest;

import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.core.task.AsyncTaskExecutor;
import org.springframework.core.task.TaskRejectedException;
import org.springframework.stereotype.Component;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.context.request.async.DeferredResult;

import io.gpumem.sample.ConditionalOnGpumem;
import io.gpumem.sample.SampleProperties;
import io.gpumem.sample.limits.Deadline;
import io.gpumem.sample.limits.HeapBudget;
import io.gpumem.sample.limits.OverloadedException;

/**
 * Runs a request's work on the application's task executor under a {@link Deadline}: at
 * {@code sample.request-timeout}, or when the container reports an error on the request, the deadline is
 * cancelled, the work stops at its next check and its memory goes back. The request's heap reservation,
 * cut to what its parsed body holds, is given back when the work is over, not when the answer is sent.
 * <p>
 * Tomcat learns that a client has gone only when it writes to it, which a request computing its answer
 * does not do; the deadline is what bounds work a client has abandoned.
 */
@Component
@ConditionalOnGpumem
class AsyncRequests {

	private final AsyncTaskExecutor executor;

	private final Duration timeout;

	AsyncRequests(@Qualifier("applicationTaskExecutor") AsyncTaskExecutor executor, SampleProperties properties) {
		this.executor = executor;
		this.timeout = properties.requestTimeout();
	}

	/** Starts {@code work} for the current request; its result, or what it threw, is the answer. */
	<T> DeferredResult<T> run(Function<Deadline, T> work) {
		Deadline deadline = Deadline.after(this.timeout);
		HeapBudget.Reservation reservation = claimReservation();
		if (reservation != null) {
			reservation.bodyParsed();
		}
		DeferredResult<T> result = new DeferredResult<>(this.timeout.toMillis());
		result.onTimeout(() -> {
			deadline.expire();
			result.setErrorResult(deadline.exceeded());
		});
		result.onError((ex) -> deadline.cancel("the client went away"));
		try {
			this.executor.execute(() -> {
				try {
					deadline.check();
					result.setResult(work.apply(deadline));
				}
				catch (RuntimeException | Error ex) {
					result.setErrorResult(ex);
				}
				finally {
					if (reservation != null) {
						reservation.close();
					}
				}
			});
		}
		catch (TaskRejectedException ex) {
			if (reservation != null) {
				reservation.close();
			}
			throw new OverloadedException("the service is busy: every worker is taken and the queue is full "
					+ "(spring.task.execution.pool)", Duration.ofSeconds(1));
		}
		return result;
	}

	private static HeapBudget.Reservation claimReservation() {
		HttpServletRequest request = ((ServletRequestAttributes) RequestContextHolder.currentRequestAttributes())
			.getRequest();
		Object reservation = request.getAttribute(RequestBodyLimitFilter.RESERVATION);
		request.removeAttribute(RequestBodyLimitFilter.RESERVATION);
		return (HeapBudget.Reservation) reservation;
	}

}
