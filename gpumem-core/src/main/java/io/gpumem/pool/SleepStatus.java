package io.gpumem.pool;

import java.time.Duration;

/**
 * Whether a pool sleeps, and what its last sleep and its last wake did ({@link MemoryPool#sleep},
 * {@link MemoryPool#wake}).
 *
 * @param state whether the pool sleeps
 * @param sleeps how many times the pool fell asleep
 * @param wakes how many times it woke
 * @param offloadedBytes bytes of host memory holding lent buffers' bytes until the wake
 * @param lastSleep the last sleep, or null where the pool never slept
 * @param lastWake the last wake, or null where the pool never woke
 */
public record SleepStatus(State state, long sleeps, long wakes, long offloadedBytes, Sleep lastSleep, Wake lastWake) {

	/** A pool that never slept. */
	public static final SleepStatus NEVER = new SleepStatus(State.AWAKE, 0, 0, 0, null, null);

	/** Whether a pool sleeps. */
	public enum State {

		/** Lending: its buffers' memory is mapped. */
		AWAKE,

		/** Holding no memory of the device but what a granule the driver refused to unmap keeps. */
		ASLEEP

	}

	/**
	 * What a sleep did.
	 *
	 * @param mode what it did with the lent buffers' bytes
	 * @param releasedBytes bytes of the device given back: cached memory, and the memory behind lent buffers
	 * @param offloadedBytes bytes copied to host memory, which the pool holds until the wake
	 * @param lentBytes bytes of the buffers lent as the pool fell asleep, which keep their addresses
	 * @param duration how long it took, the wait for stream work included
	 */
	public record Sleep(SleepMode mode, long releasedBytes, long offloadedBytes, long lentBytes, Duration duration) {
	}

	/**
	 * What a wake did.
	 *
	 * @param mappedBytes bytes of the device mapped again behind lent buffers
	 * @param restoredBytes bytes copied back from host memory
	 * @param cause what woke the pool: a call, an acquire or a buffer's use
	 * @param duration how long it took
	 */
	public record Wake(long mappedBytes, long restoredBytes, String cause, Duration duration) {
	}

}
