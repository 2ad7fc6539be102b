package io.gpumem.pool;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/** The one daemon thread that runs every pool's periodic work: idle trims and leak reclaims. */
final class Maintenance {

	private static final ScheduledThreadPoolExecutor EXECUTOR = createExecutor();

	private static final long PERIOD_NANOS = 1_000_000_000L;

	private Maintenance() {
	}

	/**
	 * Runs a pool's {@code task} every second, or a quarter of {@code idleTrimNanos} where idle trimming is on
	 * and that is sooner (at least every millisecond), so that idle memory goes back on time.
	 */
	static ScheduledFuture<?> schedule(Runnable task, long idleTrimNanos) {
		long period = (idleTrimNanos > 0) ? Math.min(PERIOD_NANOS, Math.max(1_000_000L, idleTrimNanos / 4))
				: PERIOD_NANOS;
		return EXECUTOR.scheduleWithFixedDelay(task, period, period, TimeUnit.NANOSECONDS);
	}

	private static ScheduledThreadPoolExecutor createExecutor() {
		ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
			Thread thread = new Thread(runnable, "gpumem-maintenance");
			thread.setDaemon(true);
			return thread;
		});
		executor.setRemoveOnCancelPolicy(true);
		return executor;
	}

}
