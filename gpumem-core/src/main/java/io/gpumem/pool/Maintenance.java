package io.gpumem.pool;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/** The one daemon thread that runs every pool's periodic work: idle trims and leak reclaims. */
final class Maintenance {

	private static final ScheduledThreadPoolExecutor EXECUTOR = createExecutor();

	private Maintenance() {
	}

	static ScheduledFuture<?> schedule(Runnable task, long periodNanos) {
		return EXECUTOR.scheduleWithFixedDelay(task, periodNanos, periodNanos, TimeUnit.NANOSECONDS);
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
