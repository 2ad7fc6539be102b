package io.gpumem.pressure;

import io.gpumem.config.InvalidSettingException;

/**
 * What the pressure handler does at a level: nothing, shrink the pools' caches to a target
 * utilization, or call its callbacks.
 */
public sealed interface PressureReaction {

	/** Do nothing. */
	static PressureReaction none() {
		return None.INSTANCE;
	}

	/**
	 * Trim cached memory until utilization is at most {@code targetUtilization} or nothing cached is left.
	 * @throws IllegalArgumentException unless {@code 0 < targetUtilization <= 1}
	 */
	static PressureReaction shrink(double targetUtilization) {
		return new Shrink(targetUtilization);
	}

	/** Call the handler's callbacks when the level is entered. */
	static PressureReaction callback() {
		return Callback.INSTANCE;
	}

	/** Does nothing. */
	enum None implements PressureReaction {

		INSTANCE

	}

	/** Calls the handler's callbacks once per entry into the level. */
	enum Callback implements PressureReaction {

		INSTANCE

	}

	/**
	 * Trims cached memory on every check at the level while utilization is above the target.
	 *
	 * @param targetUtilization the utilization to shrink to
	 */
	record Shrink(double targetUtilization) implements PressureReaction {

		public Shrink {
			if (!(targetUtilization > 0 && targetUtilization <= 1)) {
				throw new InvalidSettingException("shrink-target", targetUtilization, "must be in (0, 1]");
			}
		}

	}

}
