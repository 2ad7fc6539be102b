package io.gpumem.admission;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

class GpuAdmissionTest {

	private final ExecutorService threads = Executors.newCachedThreadPool();

	@AfterEach
	void stop() throws InterruptedException {
		this.threads.shutdownNow();
		this.threads.awaitTermination(10, TimeUnit.SECONDS);
	}

	@Test
	void workBeyondTheLimitIsTurnedAwayWhenItsWaitRunsOut() {
		GpuAdmission admission = new GpuAdmission("device 0", 2, Duration.ofMillis(50));
		GpuAdmission.Permit first = admission.enter();
		GpuAdmission.Permit second = admission.enter();
		assertThat(admission.active()).isEqualTo(2);
		assertThatExceptionOfType(GpuAdmissionException.class).isThrownBy(admission::enter)
			.withMessage("GPU work on device 0 not admitted within 50 ms: 2 pieces of work run at once (the limit) "
					+ "and 0 more wait ahead of it")
			.satisfies((ex) -> assertThat(ex.refused()).isEqualTo(GpuAdmissionException.Refused.PERMIT))
			.satisfies((ex) -> assertThat(ex.retryAfter()).isEqualTo(Duration.ofSeconds(1)));
		assertThat(admission.rejections()).isEqualTo(1);
		assertThat(admission.waits()).isEqualTo(1);
		assertThat(admission.waitTime()).isGreaterThanOrEqualTo(Duration.ofMillis(50));
		first.close();
		first.close();
		assertThat(admission.active()).as("a second close gives nothing back twice").isEqualTo(1);
		admission.enter(Duration.ZERO).close();
		second.close();
		assertThat(admission.active()).isZero();
		assertThat(admission.admitted()).isEqualTo(3);
	}

	@Test
	void waitersAreAdmittedInTheOrderTheyCame() throws Exception {
		GpuAdmission admission = new GpuAdmission("device 0", 1, Duration.ofSeconds(10));
		GpuAdmission.Permit running = admission.enter();
		List<Integer> order = new CopyOnWriteArrayList<>();
		List<Future<?>> waiters = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			int id = i;
			waiters.add(this.threads.submit(() -> {
				try (GpuAdmission.Permit permit = admission.enter()) {
					order.add(id);
				}
			}));
			int waiting = i + 1;
			await().atMost(Duration.ofMinutes(1)).until(() -> admission.waiting() == waiting);
		}
		running.close();
		for (Future<?> waiter : waiters) {
			waiter.get(10, TimeUnit.SECONDS);
		}
		assertThat(order).containsExactly(0, 1, 2, 3);
		assertThat(admission.rejections()).isZero();
	}

	@Test
	void manyThreadsNeverRunMoreThanTheLimitAndAllAreAccountedFor() throws Exception {
		GpuAdmission admission = new GpuAdmission("device 0", 3, Duration.ofSeconds(30));
		AtomicInteger running = new AtomicInteger();
		AtomicInteger most = new AtomicInteger();
		List<Future<?>> workers = new ArrayList<>();
		for (int t = 0; t < 16; t++) {
			workers.add(this.threads.submit(() -> {
				for (int i = 0; i < 500; i++) {
					try (GpuAdmission.Permit permit = admission.enter()) {
						most.accumulateAndGet(running.incrementAndGet(), Math::max);
						Thread.onSpinWait();
						running.decrementAndGet();
					}
				}
			}));
		}
		for (Future<?> worker : workers) {
			worker.get(60, TimeUnit.SECONDS);
		}
		assertThat(most.get()).isBetween(1, 3);
		assertThat(admission.active()).isZero();
		assertThat(admission.waiting()).isZero();
		assertThat(admission.admitted()).isEqualTo(16 * 500);
		assertThat(admission.rejections()).isZero();
	}

	@Test
	void withoutALimitEveryoneIsAdmittedAndCounted() {
		GpuAdmission admission = GpuAdmission.unlimited("device 0");
		List<GpuAdmission.Permit> permits = new ArrayList<>();
		for (int i = 0; i < 1000; i++) {
			permits.add(admission.enter());
		}
		assertThat(admission.active()).isEqualTo(1000);
		permits.forEach(GpuAdmission.Permit::close);
		assertThat(admission.active()).isZero();
		assertThat(admission.waits()).isZero();
	}

	@Test
	void badSettingsAreRefusedNamingTheValue() {
		assertThatIllegalArgumentException().isThrownBy(() -> new GpuAdmission("d", -1, Duration.ZERO))
			.withMessage("max-concurrent must be 0 (no limit) or more, not -1");
		assertThatIllegalArgumentException().isThrownBy(() -> new GpuAdmission("d", 1, Duration.ofSeconds(-2)))
			.withMessage("max-wait must be 0 or more, not PT-2S");
	}

}
