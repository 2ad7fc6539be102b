package io.gpumem.autoconfigure.health;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import io.gpumem.backend.GpuBackend;
import io.gpumem.memory.DeviceFailure;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.pressure.PressureHandler;
import io.gpumem.pressure.PressureLevel;

/**
 * UP with the device's figures while the pressure handler's device level is below CRITICAL,
 * OUT_OF_SERVICE at CRITICAL and OUT_OF_MEMORY, so that a readiness group including {@code gpumem} takes
 * the instance out of rotation until memory frees, and DOWN with the error once the device has failed for
 * good. The level is the handler's, as the {@code gpumem.pressure.level} gauge and the endpoint show it;
 * without a handler the indicator is UP with the figures alone.
 */
public class GpumemHealthIndicator extends AbstractHealthIndicator {

	private final GpuBackend backend;

	private final PressureHandler pressure;

	/** @param pressure the pressure handler, or {@code null} when there is none */
	public GpumemHealthIndicator(GpuBackend backend, PressureHandler pressure) {
		super("GPU memory health check failed");
		this.backend = backend;
		this.pressure = pressure;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		builder.withDetail("backend", this.backend.name()).withDetail("device", this.backend.deviceName());
		MemoryInfo memory = this.backend.workingMemoryInfo().orElse(null);
		if (memory == null) {
			DeviceFailure failure = this.backend.health().failure().orElseThrow();
			builder.down()
				.withDetail("error", failure.error())
				.withDetail("call", failure.call())
				.withDetail("thread", failure.thread())
				.withDetail("failedAt", failure.at())
				.withDetail("reason", failure.describe());
			return;
		}
		builder.up();
		if (this.pressure != null) {
			PressureLevel level = this.pressure.level();
			if (level.compareTo(PressureLevel.CRITICAL) >= 0) {
				builder.status(Status.OUT_OF_SERVICE);
			}
			builder.withDetail("level", level);
		}
		builder.withDetail("utilization", memory.utilization())
			.withDetail("freeBytes", memory.freeBytes())
			.withDetail("totalBytes", memory.totalBytes());
	}

}
