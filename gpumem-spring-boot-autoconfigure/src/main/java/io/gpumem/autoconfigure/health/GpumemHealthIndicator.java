package io.gpumem.autoconfigure.health;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import io.gpumem.backend.GpuBackend;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.pressure.PressureLevel;
import io.gpumem.pressure.PressureThresholds;

/**
 * UP with the device's figures while memory pressure is below CRITICAL, OUT_OF_SERVICE from CRITICAL on,
 * so that a readiness group including {@code gpumem} takes the instance out of rotation until memory frees.
 */
public class GpumemHealthIndicator extends AbstractHealthIndicator {

	private final GpuBackend backend;

	private final PressureThresholds thresholds;

	public GpumemHealthIndicator(GpuBackend backend, PressureThresholds thresholds) {
		super("GPU memory health check failed");
		this.backend = backend;
		this.thresholds = thresholds;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		MemoryInfo memory = this.backend.memoryInfo();
		PressureLevel level = this.thresholds.levelOf(memory.utilization());
		builder.status((level.compareTo(PressureLevel.CRITICAL) >= 0) ? Status.OUT_OF_SERVICE : Status.UP)
			.withDetail("backend", this.backend.name())
			.withDetail("device", this.backend.deviceName())
			.withDetail("level", level)
			.withDetail("utilization", memory.utilization())
			.withDetail("freeBytes", memory.freeBytes())
			.withDetail("totalBytes", memory.totalBytes());
	}

}
