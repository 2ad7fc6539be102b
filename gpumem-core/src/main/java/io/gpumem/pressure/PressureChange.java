package io.gpumem.pressure;

import io.gpumem.memory.MemoryInfo;
import io.gpumem.pressure.PressureHandler.Memory;

/**
 * A change of one memory's pressure level, as listeners and callbacks are told of it.
 *
 * @param memory the memory whose level changed: the device's or pinned host memory
 * @param previous the level before
 * @param level the level now
 * @param utilization that memory's utilization when the change was seen, or -1 where unknown
 * @param info that memory's info then, or {@code null} where unknown
 */
public record PressureChange(Memory memory, PressureLevel previous, PressureLevel level, double utilization,
		MemoryInfo info) {
}
