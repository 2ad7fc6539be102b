package io.gpumem.stream;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.CancellationException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * How gpumem waits for GPU work, a rule stated here once.
 * <p>
 * A native call cannot unmount a virtual thread from its carrier (JEP 491 ended pinning for monitors, not for native
 * calls), so a driver call that waits for the GPU would hold the carrier, and every other virtual thread it could
 * run, for as long as the GPU works. A virtual thread therefore polls whether the work is complete, which never
 * waits, and parks between polls, for {@value #FIRST_PARK_MICROS} µs at first and twice as long each time after, up
 * to {@value #LONGEST_PARK_MICROS} µs; a platform thread keeps the driver's wait, the cheapest. A parked wait ends
 * with a {@link CancellationException} when its thread is interrupted, leaving the interrupt set; the driver's wait
 * cannot be interrupted.
 */
public final class GpuWaits {

	static final long FIRST_PARK_MICROS = 20;

	static final long LONGEST_PARK_MICROS = 1000;

	/** {@code Thread.isVirtual()}, on Java 21 and later; null before. */
	private static final MethodHandle IS_VIRTUAL = isVirtual();

	private GpuWaits() {
	}

	/** Whether the calling thread waits by parking: whether it is a virtual thread. */
	public static boolean parks() {
		if (IS_VIRTUAL == null) {
			return false;
		}
		try {
			return (boolean) IS_VIRTUAL.invokeExact(Thread.currentThread());
		}
		catch (Throwable ex) {
			throw new IllegalStateException("Thread.isVirtual() failed", ex);
		}
	}

	/**
	 * Waits until {@code complete} answers true: a virtual thread polls it, parking between polls; a platform thread
	 * runs {@code block}, the driver's wait.
	 * @throws CancellationException if the virtual thread is interrupted while it waits
	 */
	public static void await(BooleanSupplier complete, Runnable block) {
		if (parks()) {
			poll(complete, Long.MAX_VALUE);
		}
		else {
			block.run();
		}
	}

	/**
	 * Polls {@code complete} until it answers true or {@code timeoutNanos} pass, parking between polls, whatever the
	 * thread: the way to wait with a deadline, which the driver's waits have not.
	 * @return whether the work completed in time
	 * @throws CancellationException if the thread is interrupted while it waits
	 */
	public static boolean poll(BooleanSupplier complete, long timeoutNanos) {
		long start = System.nanoTime();
		long park = FIRST_PARK_MICROS * 1000;
		while (!complete.getAsBoolean()) {
			long left = timeoutNanos - (System.nanoTime() - start);
			if (left <= 0) {
				return false;
			}
			LockSupport.parkNanos(Math.min(park, left));
			if (Thread.interrupted()) {
				Thread.currentThread().interrupt();
				throw new CancellationException("interrupted while waiting for GPU work");
			}
			park = Math.min(park * 2, LONGEST_PARK_MICROS * 1000);
		}
		return true;
	}

	private static MethodHandle isVirtual() {
		try {
			return MethodHandles.publicLookup()
				.findVirtual(Thread.class, "isVirtual", MethodType.methodType(boolean.class));
		}
		catch (NoSuchMethodException | IllegalAccessException ex) {
			return null;
		}
	}

}
