package io.gpumem.pressure;

import io.gpumem.config.InvalidSettingException;

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
	 * @throws InvalidSettingException naming the first threshold out of {@code 0 < elevated < warning < critical <= 1}
	 */
	public PressureThresholds {
		String order = "; thresholds must satisfy 0 < elevated < warning < critical <= 1";
		if (!(elevated > 0)) {
			throw new InvalidSettingException("elevated", elevated, "must be above 0" + order);
		}
		if (!(warning > elevated)) {
			throw new InvalidSettingException("warning", warning, "must be above elevated (" + elevated + ")" + order);
		}
		if (!(critical > warning)) {
			throw new InvalidSettingException("critical", critical, "must be above warning (" + warning + ")" + order);
		}
		if (!(critical <= 1)) {
			throw new InvalidSettingException("critical", critical, "must be 1 or less" + order);
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
