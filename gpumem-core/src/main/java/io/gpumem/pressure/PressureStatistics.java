package io.gpumem.pressure;

/**
 * A snapshot of the pressure handler.
 *
 * @param level the level at the last check
 * @param utilization the utilization at the last check
 * @param checks checks made, scheduled or after growth
 * @param levelChanges changes of level listeners were told of
 * @param shrinks SHRINK reactions that trimmed something
 * @param shrunkBytes bytes trimmed by SHRINK reactions
 * @param callbacks calls of the callbacks by CALLBACK reactions
 * @param outOfMemoryRefusals allocations the allocator refused that the handler was asked to make room for
 * @param outOfMemoryFreedBytes bytes trimmed to make room for them
 * @param outOfMemoryFailures allocations that failed in the end, after the retries
 */
public record PressureStatistics(PressureLevel level, double utilization, long checks, long levelChanges,
		long shrinks, long shrunkBytes, long callbacks, long outOfMemoryRefusals, long outOfMemoryFreedBytes,
		long outOfMemoryFailures) {
}
