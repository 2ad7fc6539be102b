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

	/** An allocation was refused. */
	OUT_OF_MEMORY

}
