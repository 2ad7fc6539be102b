package io.gpumem.autoconfigure.health;

import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.GpuDeviceFailedException;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.pressure.PressureHandler;
import io.gpumem.pressure.PressureLevel;
import io.gpumem.pressure.PressureReaction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class GpumemHealthIndicatorTest {

	private final HostBackend backend = new HostBackend(100L << 20);

	private final AtomicLong clock = new AtomicLong();

	private final PressureHandler pressure = PressureHandler.builder(this.backend::memoryInfo)
		.ticker(this.clock::get)
		.reaction(PressureLevel.WARNING, PressureReaction.none())
		.reaction(PressureLevel.CRITICAL, PressureReaction.none())
		.build();

	private final GpumemHealthIndicator indicator = new GpumemHealthIndicator(this.backend, this.pressure);

	@AfterEach
	void close() {
		this.pressure.close();
	}

	@Test
	void upWithTheHandlersLevelBelowCritical() {
		Allocation allocation = this.backend.allocator(MemoryKind.DEVICE).allocate(80L << 20);
		Health health = this.indicator.health(true);
		assertThat(health.getDetails()).as("the level of the handler's last check").containsEntry("level",
				PressureLevel.NORMAL);
		this.pressure.check();
		health = this.indicator.health(true);
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
		this.pressure.check();
		Health health = this.indicator.health(true);
		assertThat(health.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
		assertThat(health.getDetails()).containsEntry("level", PressureLevel.CRITICAL);
		this.backend.allocator(MemoryKind.DEVICE).free(allocation);
	}

	@Test
	void outOfServiceAfterAFailedAllocationUntilTheMinimumDurationPassedWithoutAnother() {
		try (StratifiedMemoryPool pool = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE),
				PoolConfig.builder("device").build())) {
			this.pressure.register(pool);
			Allocation other = this.backend.allocator(MemoryKind.DEVICE).allocate(80L << 20);
			assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> pool.acquire(40L << 20));
			Health health = this.indicator.health(true);
			assertThat(health.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
			assertThat(health.getDetails()).containsEntry("level", PressureLevel.OUT_OF_MEMORY);
			this.backend.allocator(MemoryKind.DEVICE).free(other);
			this.pressure.check();
			assertThat(this.indicator.health(true).getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
			this.clock.addAndGet(this.pressure.hysteresis().minDuration().toNanos());
			this.pressure.check();
			assertThat(this.indicator.health(true).getStatus()).isEqualTo(Status.UP);
		}
	}

	@Test
	void downWithTheFirstErrorOnceTheDeviceHasFailedForGood() {
		try (StratifiedMemoryPool pool = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE),
				PoolConfig.builder("device").build())) {
			this.backend.health().injectFault(0);
			assertThatExceptionOfType(GpuDeviceFailedException.class).isThrownBy(() -> pool.acquire(4096));
			Health health = this.indicator.health(true);
			assertThat(health.getStatus()).isEqualTo(Status.DOWN);
			assertThat(health.getDetails()).containsEntry("backend", "host")
				.containsEntry("error", "CUDA_ERROR_ILLEGAL_ADDRESS (700)")
				.containsEntry("call", "acquire")
				.containsEntry("thread", Thread.currentThread().getName())
				.containsKeys("failedAt", "reason")
				.doesNotContainKey("freeBytes");
		}
	}

	@Test
	void withoutAHandlerUpWithTheFiguresAlone() {
		Health health = new GpumemHealthIndicator(this.backend, null).health(true);
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).doesNotContainKey("level").containsEntry("totalBytes", 100L << 20);
	}

}
