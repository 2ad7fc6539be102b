package io.gpumem.sample.web;

import java.time.Duration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.core.task.TaskRejectedException;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

import io.gpumem.sample.SampleProperties;
import io.gpumem.sample.limits.HeapBudget;
import io.gpumem.sample.limits.OverloadedException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class AsyncRequestsTest {

	private final MockHttpServletRequest request = new MockHttpServletRequest();

	@AfterEach
	void forgetTheRequest() {
		RequestContextHolder.resetRequestAttributes();
	}

	@Test
	void aFullExecutorTurnsTheRequestAwayWithRetryAfterAndGivesItsHeapBack() {
		HeapBudget heap = new HeapBudget(1L << 20, Duration.ZERO);
		this.request.setAttribute(RequestBodyLimitFilter.RESERVATION, heap.reserve(6 * 1024));
		RequestContextHolder.setRequestAttributes(new ServletRequestAttributes(this.request));
		AsyncRequests requests = new AsyncRequests(new SimpleAsyncTaskExecutor() {

			@Override
			public void execute(Runnable task) {
				throw new TaskRejectedException("full");
			}

		}, new DisconnectWatcher(), new SampleProperties(null, null, null, null, null, null));
		assertThatExceptionOfType(OverloadedException.class).isThrownBy(() -> requests.run((deadline) -> "never"))
			.withMessage("the service is busy: every worker is taken and the queue is full (spring.task.execution.pool)")
			.satisfies((ex) -> assertThat(ex.retryAfter()).isEqualTo(Duration.ofSeconds(1)));
		assertThat(heap.reservedBytes()).isZero();
		assertThat(this.request.getAttribute(RequestBodyLimitFilter.RESERVATION)).as("claimed by the request's work")
			.isNull();
	}

}
