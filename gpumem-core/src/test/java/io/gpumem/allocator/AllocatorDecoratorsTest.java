package io.gpumem.allocator;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AllocatorDecoratorsTest {

	private final HostBackend backend = new HostBackend(1 << 20);

	private final MemoryAllocator device = this.backend.allocator(MemoryKind.DEVICE);

	@Test
	void limitRefusesBeyondItsBudgetAndNamesIt() {
		LimitingAllocator limited = new LimitingAllocator(this.device, 1000);
		Allocation a = limited.allocate(600);
		assertThatThrownBy(() -> limited.allocate(401)).isInstanceOf(GpuOutOfMemoryException.class)
			.hasMessageContaining("Its limit is 1000 B")
			.satisfies(ex -> assertThat(((GpuOutOfMemoryException) ex).diagnostic().limitBytes()).isEqualTo(1000));
		Allocation b = limited.allocate(400);
		assertThat(limited.allocatedBytes()).isEqualTo(1000);
		limited.free(a);
		limited.free(b);
		assertThat(limited.allocatedBytes()).isZero();
	}

	@Test
	void limitsSharingABudgetHoldAtMostItTogether() {
		MemoryBudget budget = new MemoryBudget(1000);
		LimitingAllocator device = new LimitingAllocator(this.device, budget);
		LimitingAllocator unified = new LimitingAllocator(this.backend.allocator(MemoryKind.UNIFIED), budget);
		Allocation a = device.allocate(700);
		assertThatThrownBy(() -> unified.allocate(301)).isInstanceOf(GpuOutOfMemoryException.class)
			.hasMessageContaining("700 B of 1000 B");
		Allocation b = unified.allocate(300);
		assertThat(budget.usedBytes()).isEqualTo(1000).isEqualTo(device.allocatedBytes());
		device.free(a);
		assertThat(unified.allocatedBytes()).isEqualTo(300);
		unified.free(b);
		assertThat(budget.usedBytes()).isZero();
	}

	@Test
	void limitGivesBackItsReservationWhenUpstreamRefuses() {
		LimitingAllocator limited = new LimitingAllocator(FaultInjectingAllocator.everyNth(this.device, 1), 1000);
		assertThatThrownBy(() -> limited.allocate(100)).isInstanceOf(GpuOutOfMemoryException.class);
		assertThat(limited.allocatedBytes()).isZero();
	}

	@Test
	void limitFromAFractionOfTheDevice() {
		assertThat(LimitingAllocator.ofFraction(this.device, 0.5).limitBytes()).isEqualTo(512 * 1024);
		assertThatIllegalArgumentException().isThrownBy(() -> LimitingAllocator.ofFraction(this.device, 0))
			.withMessage("memory-fraction must lie in (0, 1], not 0.0");
		assertThatIllegalArgumentException().isThrownBy(() -> LimitingAllocator.ofFraction(this.device, 1.5))
			.withMessageContaining("1.5");
		assertThatIllegalArgumentException().isThrownBy(() -> new LimitingAllocator(this.device, 0));
	}

	@Test
	void statisticsCountCurrentPeakTotalAndFailures() {
		StatisticsAllocator stats = new StatisticsAllocator(new LimitingAllocator(this.device, 1000));
		Allocation a = stats.allocate(300);
		Allocation b = stats.allocate(500);
		stats.free(a);
		Allocation c = stats.allocate(100);
		assertThatThrownBy(() -> stats.allocate(900)).isInstanceOf(GpuOutOfMemoryException.class);
		assertThat(stats.statistics()).isEqualTo(new AllocatorStatistics(600, 800, 900, 2, 2, 3, 1));
		assertThat(stats.currentBytes()).isEqualTo(600);
		stats.free(b);
		stats.free(c);
		assertThat(stats.statistics().currentBytes()).isZero();
		assertThat(stats.statistics().currentCount()).isZero();
	}

	@Test
	void trackingListsWhatIsOutstandingWithItsSite() {
		TrackingAllocator tracking = new TrackingAllocator(this.device, true);
		Allocation a = tracking.allocate(128);
		Allocation b = tracking.allocate(256);
		tracking.free(a);
		assertThat(tracking.outstanding()).singleElement().satisfies(tracked -> {
			assertThat(tracked.allocation()).isSameAs(b);
			assertThat(tracked.bytes()).isEqualTo(256);
			assertThat(tracked.allocationSite()).anyMatch(frame -> frame.getMethodName()
				.equals("trackingListsWhatIsOutstandingWithItsSite"));
		});
		assertThat(tracking.outstandingBytes()).isEqualTo(256);
		assertThatIllegalStateException().isThrownBy(() -> tracking.free(a)).withMessageContaining("does not hold");
		tracking.free(b);
		assertThat(tracking.outstanding()).isEmpty();
		assertThat(new TrackingAllocator(this.device, false).allocate(1)).isNotNull();
	}

	@Test
	void faultsEveryNthCall() {
		FaultInjectingAllocator faulty = FaultInjectingAllocator.everyNth(this.device, 3);
		List<Boolean> failed = new ArrayList<>();
		for (int i = 0; i < 9; i++) {
			try {
				faulty.free(faulty.allocate(8));
				failed.add(false);
			}
			catch (GpuOutOfMemoryException ex) {
				assertThat(ex).hasMessageContaining("injected fault");
				failed.add(true);
			}
		}
		assertThat(failed).containsExactly(false, false, true, false, false, true, false, false, true);
		assertThat(faulty.injectedFailures()).isEqualTo(3);
		assertThat(this.device.memoryInfo().freeBytes()).isEqualTo(1 << 20);
	}

	@Test
	void faultsWithAProbability() {
		FaultInjectingAllocator faulty = FaultInjectingAllocator.withProbability(this.device, 0.25, 42);
		int failures = 0;
		for (int i = 0; i < 4000; i++) {
			try {
				faulty.free(faulty.allocate(8));
			}
			catch (GpuOutOfMemoryException ex) {
				failures++;
			}
		}
		assertThat(failures).isBetween(850, 1150).isEqualTo((int) faulty.injectedFailures());
		assertThatIllegalArgumentException().isThrownBy(() -> FaultInjectingAllocator.withProbability(this.device, 2, 1));
		assertThatIllegalArgumentException().isThrownBy(() -> FaultInjectingAllocator.everyNth(this.device, 0));
	}

	@Test
	void decoratorsStackAndCanBeFound() {
		StatisticsAllocator stats = new StatisticsAllocator(this.device);
		MemoryAllocator chain = new TrackingAllocator(new LimitingAllocator(stats, 4096), false);
		chain.free(chain.allocate(1000));
		assertThat(AllocatorDecorator.find(chain, StatisticsAllocator.class)).isSameAs(stats);
		assertThat(AllocatorDecorator.find(chain, FaultInjectingAllocator.class)).isNull();
		assertThat(stats.statistics().totalBytes()).isEqualTo(1000);
		assertThat(chain.kind()).isEqualTo(MemoryKind.DEVICE);
		assertThat(chain.describe()).contains("limit 4.00 KiB");
	}

}
