package io.gpumem.pressure;

import io.gpumem.memory.MemoryInfo;

/**
 * A change of pressure level, as listeners and callbacks are told of it.
 *
 * @param previous the level before
 * @param level the level now
 * @param utilization the device's utilization when the change was seen
 * @param memory the device's memory info then
 */
public record PressureChange(PressureLevel previous, PressureLevel level, double utilization, MemoryInfo memory) {
}
