package io.gpumem.pressure;

import java.time.Duration;

import io.gpumem.config.InvalidSettingException;

/**
 * How a memory's pressure level is kept from flapping, as alerting rules keep an alert firing: a level is entered as
 * soon as utilization reaches its threshold, and left only once utilization has stayed below that threshold by
 * {@code margin} for {@code minDuration}, at every check; OUT_OF_MEMORY, entered when an allocation fails for good,
 * is left once {@code minDuration} passed without another failure.
 *
 * @param margin how far below a level's threshold utilization must fall to leave the level, in [0, 1)
 * @param minDuration how long utilization must stay below a level's threshold by the margin to leave it
 */
public record PressureHysteresis(double margin, Duration minDuration) {

	/**
	 * The defaults: a margin of 0.1, wider than the default thresholds' distance to the shrink target (0.75 - 0.7),
	 * so that a shrink does not by itself end the level whose reaction it is, and 10 seconds.
	 */
	public static final PressureHysteresis DEFAULTS = new PressureHysteresis(0.1, Duration.ofSeconds(10));

	/** None: every level follows utilization at each check, and OUT_OF_MEMORY lasts until the next check. */
	public static final PressureHysteresis NONE = new PressureHysteresis(0, Duration.ZERO);

	/**
	 * @throws InvalidSettingException naming {@code margin} outside [0, 1) or a negative {@code minDuration}
	 */
	public PressureHysteresis {
		if (!(margin >= 0 && margin < 1)) {
			throw new InvalidSettingException("margin", margin, "must be in [0, 1)");
		}
		if (minDuration == null || minDuration.isNegative()) {
			throw new InvalidSettingException("min-duration", minDuration, "must be 0 or more");
		}
	}

	/**
	 * The level a memory at {@code current}, at {@code utilization}, moves to: up at once to the level of the
	 * utilization, down to the {@link #lowered} one only once {@code calmNanos}, how long the memory has been calm
	 * ({@link MemoryWatch#calm}, -1 where it is not), reaches the minimum.
	 */
	PressureLevel next(PressureThresholds thresholds, PressureLevel current, double utilization, long calmNanos) {
		PressureLevel reached = thresholds.levelOf(utilization);
		if (reached.compareTo(current) >= 0) {
			return reached;
		}
		if (calmNanos < this.minDuration.toNanos()) {
			return current;
		}
		PressureLevel lowered = lowered(thresholds, utilization);
		return (lowered.compareTo(current) < 0) ? lowered : current;
	}

	/** The level of {@code utilization} raised by the margin: where a level is left for. */
	PressureLevel lowered(PressureThresholds thresholds, double utilization) {
		return thresholds.levelOf(utilization + this.margin);
	}

}
