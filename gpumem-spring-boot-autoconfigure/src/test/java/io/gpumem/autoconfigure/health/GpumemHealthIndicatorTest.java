package io.gpumem.autoconfigure.health;

import org.junit.jupiter.api.Test;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pressure.PressureLevel;
import io.gpumem.pressure.PressureThresholds;

import static org.assertj.core.api.Assertions.assertThat;

class GpumemHealthIndicatorTest {

	private final HostBackend backend = new HostBackend(100L << 20);

	private final GpumemHealthIndicator indicator = new GpumemHealthIndicator(this.backend, PressureThresholds.DEFAULTS);

	@Test
	void upWithDetailsBelowCritical() {
		Allocation allocation = this.backend.allocator(MemoryKind.DEVICE).allocate(80L << 20);
		Health health = this.indicator.health(true);
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsEntry("backend", "host")
			.containsEntry("level", PressureLevel.WARNING)
			.containsEntry("totalBytes", 100L << 20)
			.containsEntry("freeBytes", 20L << 20);
		this.backend.allocator(MemoryKind.DEVICE).free(allocation);
	}

	@Test
	void outOfServiceFromCriticalOn() {
		Allocation allocation = this.backend.allocator(MemoryKind.DEVICE).allocate(95L << 20);
		Health health = this.indicator.health(true);
		assertThat(health.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
		assertThat(health.getDetails()).containsEntry("level", PressureLevel.CRITICAL);
		this.backend.allocator(MemoryKind.DEVICE).free(allocation);
	}

}
