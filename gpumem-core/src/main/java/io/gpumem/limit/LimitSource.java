package io.gpumem.limit;

import java.util.List;

/**
 * One way a process is told how much of a device's memory it may use: an environment variable a GPU-sharing
 * system sets, or a file of the process's control group. Every source is read through this interface, by
 * {@link DeviceLimits} alone.
 */
public interface LimitSource {

	/**
	 * What this source says of {@code device}: nothing where it is not present, or a reading per figure it states.
	 * @throws InvalidLimitException if the source is present but its value cannot be read
	 */
	List<LimitReading> read(SharedDevice device);

}
