package io.gpumem.stream;

import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** Who parks and who waits in the driver, and how a parked wait ends: complete, out of time, or interrupted. */
class GpuWaitsTest {

	@Test
	void aPlatformThreadWaitsInTheDriver() {
		AtomicBoolean blocked = new AtomicBoolean();
		AtomicInteger polls = new AtomicInteger();
		GpuWaits.await(() -> polls.incrementAndGet() > 0, () -> blocked.set(true));
		assertThat(GpuWaits.parks()).isFalse();
		assertThat(blocked).isTrue();
		assertThat(polls).as("the driver's wait, not a poll").hasValue(0);
	}

	@Test
	@EnabledForJreRange(min = JRE.JAVA_21, disabledReason = "virtual threads came in Java 21")
	void aVirtualThreadPollsUntilTheWorkIsCompleteNeverWaitingInTheDriver() throws Exception {
		ExecutorService virtual = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor")
			.invoke(null);
		try {
			AtomicBoolean blocked = new AtomicBoolean();
			AtomicInteger polls = new AtomicInteger();
			boolean parks = virtual.submit(() -> {
				GpuWaits.await(() -> polls.incrementAndGet() == 5, () -> blocked.set(true));
				return GpuWaits.parks();
			}).get();
			assertThat(parks).isTrue();
			assertThat(blocked).isFalse();
			assertThat(polls).hasValue(5);
		}
		finally {
			virtual.shutdown();
		}
	}

	@Test
	void aPollWithADeadlineAnswersWhetherTheWorkCompletedInTime() {
		AtomicInteger polls = new AtomicInteger();
		assertThat(GpuWaits.poll(() -> polls.incrementAndGet() == 3, Long.MAX_VALUE)).isTrue();
		assertThat(polls).hasValue(3);
		assertThat(GpuWaits.poll(() -> false, 2_000_000)).isFalse();
		assertThat(GpuWaits.poll(() -> true, 0)).as("complete work needs no time").isTrue();
	}

	@Test
	void anInterruptEndsAParkedWaitAndStaysSet() {
		Thread.currentThread().interrupt();
		try {
			assertThatExceptionOfType(CancellationException.class)
				.isThrownBy(() -> GpuWaits.poll(() -> false, Long.MAX_VALUE))
				.withMessage("interrupted while waiting for GPU work");
			assertThat(Thread.currentThread().isInterrupted()).isTrue();
		}
		finally {
			Thread.interrupted();
		}
	}

}
