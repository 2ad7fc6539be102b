package io.gpumem.pressure;

/** How short the device is of memory, from its utilization and the configured thresholds. */
public enum PressureLevel {

	/** Below the elevated threshold. */
	NORMAL,

	/** At or above the elevated threshold. */
	ELEVATED,

	/** At or above the warning threshold. */
	WARNING,

	/** At or above the critical threshold. */
	CRITICAL,

	/** An allocation failed for good, within the hysteresis's minimum duration. */
	OUT_OF_MEMORY

}
