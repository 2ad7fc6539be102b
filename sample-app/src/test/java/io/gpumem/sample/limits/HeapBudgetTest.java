package io.gpumem.sample.limits;

import java.time.Duration;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

class HeapBudgetTest {

	private static final long MIB = 1024 * 1024;

	@Test
	void aReservationBeyondWhatIsFreeWaitsThenIsTurnedAwayNamingTheBudget() {
		HeapBudget budget = new HeapBudget(10 * MIB, Duration.ofMillis(50));
		try (HeapBudget.Reservation held = budget.reserve(8 * MIB)) {
			assertThatExceptionOfType(OverloadedException.class).isThrownBy(() -> budget.reserve(4 * MIB))
				.withMessage("the service is busy: requests in flight hold 8.00 MiB of the heap budget of 10.00 MiB "
						+ "(sample.heap-budget), and 4.00 MiB more did not come free within 50 ms (sample.queue-timeout)");
			assertThat(budget.reservedBytes()).isEqualTo(8 * MIB);
		}
		assertThat(budget.reservedBytes()).isZero();
	}

	@Test
	void aWaitingReservationIsServedWhenAnotherIsGivenBack() throws Exception {
		HeapBudget budget = new HeapBudget(10 * MIB, Duration.ofSeconds(10));
		HeapBudget.Reservation held = budget.reserve(8 * MIB);
		FutureTask<HeapBudget.Reservation> waiting = new FutureTask<>(() -> budget.reserve(4 * MIB));
		Thread thread = new Thread(waiting, "waiting");
		thread.start();
		await().atMost(Duration.ofMinutes(1)).until(() -> thread.getState() == Thread.State.TIMED_WAITING);
		assertThat(waiting).isNotDone();
		held.close();
		try (HeapBudget.Reservation served = waiting.get(10, TimeUnit.SECONDS)) {
			assertThat(served.bytes()).isEqualTo(4 * MIB);
		}
		assertThat(budget.reservedBytes()).isZero();
	}

	@Test
	void moreThanTheWholeBudgetIsTooLargeAtOnce() {
		HeapBudget budget = new HeapBudget(10 * MIB, Duration.ofSeconds(10));
		assertThatExceptionOfType(PayloadTooLargeException.class).isThrownBy(() -> budget.reserve(11 * MIB))
			.withMessage("the request needs 11.00 MiB of heap, more than the whole budget of 10.00 MiB for requests "
					+ "in flight (sample.heap-budget)");
		assertThat(budget.reservedBytes()).isZero();
	}

	@Test
	void aParsedBodyKeepsWhatItsValuesHoldAndGivesTheRestBack() {
		HeapBudget budget = new HeapBudget(100 * MIB, Duration.ZERO);
		try (HeapBudget.Reservation body = budget.reserve(6 * 10 * MIB)) {
			body.bodyParsed();
			assertThat(body.bytes()).isEqualTo(2 * 10 * MIB);
			assertThat(budget.reservedBytes()).isEqualTo(2 * 10 * MIB);
			body.grow(MIB);
			assertThat(budget.reservedBytes()).isEqualTo(21 * MIB);
		}
		assertThat(budget.reservedBytes()).isZero();
	}

}
