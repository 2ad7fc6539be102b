package io.gpumem.pressure;

/**
 * The utilizations at which pressure becomes elevated, warning and critical.
 *
 * @param elevated the utilization from which the level is ELEVATED
 * @param warning the utilization from which the level is WARNING
 * @param critical the utilization from which the level is CRITICAL
 */
public record PressureThresholds(double elevated, double warning, double critical) {

	/** The defaults: 0.6, 0.75 and 0.9. */
	public static final PressureThresholds DEFAULTS = new PressureThresholds(0.6, 0.75, 0.9);

	/**
	 * @throws IllegalArgumentException unless {@code 0 < elevated < warning < critical <= 1}
	 */
	public PressureThresholds {
		if (!(elevated > 0 && elevated < warning && warning < critical && critical <= 1)) {
			throw new IllegalArgumentException("pressure thresholds must satisfy 0 < elevated < warning < critical <= 1,"
					+ " but elevated=" + elevated + ", warning=" + warning + ", critical=" + critical);
		}
	}

	/** The level of a utilization. */
	public PressureLevel levelOf(double utilization) {
		if (utilization >= this.critical) {
			return PressureLevel.CRITICAL;
		}
		if (utilization >= this.warning) {
			return PressureLevel.WARNING;
		}
		return (utilization >= this.elevated) ? PressureLevel.ELEVATED : PressureLevel.NORMAL;
	}

}
