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
 * When the client closes its connection while the work runs or waits, the {@link DisconnectWatcher}
 * cancels the deadline the same way.
 */
@Component
@ConditionalOnGpumem
class AsyncRequests {

	private static final String CLIENT_GONE = "the client went away";

	private final AsyncTaskExecutor executor;

	private final DisconnectWatcher disconnects;

	private final Duration timeout;

	AsyncRequests(@Qualifier("applicationTaskExecutor") AsyncTaskExecutor executor, DisconnectWatcher disconnects,
			SampleProperties properties) {
		this.executor = executor;
		this.disconnects = disconnects;
		this.timeout = properties.requestTimeout();
	}

	/** Starts {@code work} for the current request; its result, or what it threw, is the answer. */
	<T> DeferredResult<T> run(Function<Deadline, T> work) {
		Deadline deadline = Deadline.after(this.timeout);
		HttpServletRequest request = currentRequest();
		HeapBudget.Reservation reservation = claimReservation(request);
		if (reservation != null) {
			reservation.bodyParsed();
		}
		DisconnectWatcher.Watch watch = this.disconnects.watch(request, () -> deadline.cancel(CLIENT_GONE));
		Runnable workOver = () -> {
			watch.close();
			if (reservation != null) {
				reservation.close();
			}
		};
		DeferredResult<T> result = new DeferredResult<>(this.timeout.toMillis());
		result.onTimeout(() -> {
			watch.close();
			deadline.expire();
			result.setErrorResult(deadline.exceeded());
		});
		result.onError((ex) -> {
			watch.close();
			deadline.cancel(CLIENT_GONE);
		});
		try {
			this.executor.execute(() -> {
				T answer = null;
				Throwable failure = null;
				try {
					deadline.check();
					answer = work.apply(deadline);
				}
				catch (RuntimeException | Error ex) {
					failure = ex;
				}
				finally {
					workOver.run();
				}
				if (failure != null) {
					result.setErrorResult(failure);
				}
				else {
					result.setResult(answer);
				}
			});
		}
		catch (TaskRejectedException ex) {
			workOver.run();
			throw new OverloadedException("the service is busy: every worker is taken and the queue is full "
					+ "(spring.task.execution.pool)", Duration.ofSeconds(1));
		}
		return result;
	}

	private static HttpServletRequest currentRequest() {
		return ((ServletRequestAttributes) RequestContextHolder.currentRequestAttributes()).getRequest();
	}

	private static HeapBudget.Reservation claimReservation(HttpServletRequest request) {
		Object reservation = request.getAttribute(RequestBodyLimitFilter.RESERVATION);
		request.removeAttribute(RequestBodyLimitFilter.RESERVATION);
		return (HeapBudget.Reservation) reservation;
	}

}
