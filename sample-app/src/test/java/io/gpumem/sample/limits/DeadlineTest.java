package io.gpumem.sample.limits;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class DeadlineTest {

	@Test
	void theFirstReasonGivenStays() {
		Deadline deadline = Deadline.after(Duration.ofMinutes(1));
		assertThat(deadline.isOver()).isFalse();
		assertThat(deadline.cancel("the client went away")).isTrue();
		assertThat(deadline.cancel("the request ran past its deadline")).isFalse();
		assertThat(deadline.remaining()).isZero();
		assertThatExceptionOfType(DeadlineExceededException.class).isThrownBy(deadline::check)
			.withMessage("the client went away");
	}

	/** Threads that cancel at once, as the disconnect probe and Tomcat's callbacks do: one reason wins, and stays. */
	@Test
	void ofThreadsCancellingAtOnceExactlyOneGivesTheReason() throws Exception {
		ExecutorService threads = Executors.newFixedThreadPool(8);
		try {
			for (int round = 0; round < 200; round++) {
				Deadline deadline = Deadline.after(Duration.ofMinutes(1));
				CountDownLatch start = new CountDownLatch(1);
				List<Future<Boolean>> given = new ArrayList<>();
				for (int i = 0; i < 8; i++) {
					String why = "reason " + i;
					given.add(threads.submit(() -> {
						start.await();
						return deadline.cancel(why);
					}));
				}
				start.countDown();
				List<String> winners = new ArrayList<>();
				for (int i = 0; i < given.size(); i++) {
					if (given.get(i).get()) {
						winners.add("reason " + i);
					}
				}
				assertThat(winners).as("round %d", round).hasSize(1);
				assertThat(deadline.exceeded()).hasMessage(winners.get(0));
			}
		}
		finally {
			threads.shutdownNow();
		}
	}

	@Test
	void anExpiredDeadlineSaysItsTimeout() {
		Deadline deadline = Deadline.after(Duration.ofMillis(1500));
		deadline.expire();
		assertThatExceptionOfType(DeadlineExceededException.class).isThrownBy(deadline::check)
			.withMessage("the request ran past its deadline of 1500 ms (sample.request-timeout)");
	}

}
