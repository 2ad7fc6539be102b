package io.gpumem.autoconfigure;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.ApplicationEventPublisher;

import io.gpumem.pool.MemoryPool;
import io.gpumem.pool.PoolListener;
import io.gpumem.pool.PoolStatistics;
import io.gpumem.pool.SleepMode;
import io.gpumem.pool.SleepStatus;

/**
 * Publishes every pool's sleeps and wakes as {@link GpumemSleepEvent}s and, with
 * {@code gpumem.device-pool.sleep-after-idle} set, puts each device pool to sleep, offloading, once no buffer was
 * acquired or closed for that long.
 */
final class PoolSleeps implements AutoCloseable {

	static final String SLEEP_AFTER_IDLE = "gpumem.device-pool.sleep-after-idle";

	private static final System.Logger LOGGER = System.getLogger(PoolSleeps.class.getName());

	private final Map<String, MemoryPool> devicePools = new HashMap<>();

	private final Map<String, long[]> lastActivity = new HashMap<>();

	private final Duration sleepAfterIdle;

	private final ScheduledExecutorService idleCheck;

	/**
	 * @throws InvalidConfigurationPropertyValueException if {@code sleepAfterIdle} is negative
	 */
	PoolSleeps(GpumemPools pools, ApplicationEventPublisher events, Duration sleepAfterIdle) {
		if (sleepAfterIdle.isNegative()) {
			throw new InvalidConfigurationPropertyValueException(SLEEP_AFTER_IDLE, sleepAfterIdle,
					"must be zero (never) or more");
		}
		this.sleepAfterIdle = sleepAfterIdle;
		pools.asMap().forEach((name, cache) -> {
			if (cache instanceof MemoryPool pool) {
				pool.addListener(new PoolListener() {

					@Override
					public void slept(MemoryPool slept, SleepStatus.Sleep sleep) {
						events.publishEvent(new GpumemSleepEvent(slept, sleep, null));
					}

					@Override
					public void woke(MemoryPool woken, SleepStatus.Wake wake) {
						events.publishEvent(new GpumemSleepEvent(woken, null, wake));
					}

				});
				if (name.equals("device") || name.endsWith(".device")) {
					this.devicePools.put(name, pool);
				}
			}
		});
		if (sleepAfterIdle.isZero()) {
			this.idleCheck = null;
			return;
		}
		this.idleCheck = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "gpumem-idle-sleep");
			thread.setDaemon(true);
			return thread;
		});
		long period = Math.max(10, Math.min(1000, sleepAfterIdle.toMillis() / 4));
		this.idleCheck.scheduleWithFixedDelay(this::sleepIdlePools, period, period, TimeUnit.MILLISECONDS);
	}

	/**
	 * Puts each awake device pool to sleep whose buffers none acquired or closed, and that nothing woke, for
	 * {@code sleep-after-idle}; one that refuses (it lends in fixed segments) is asked again after as long.
	 */
	void sleepIdlePools() {
		long now = System.nanoTime();
		this.devicePools.forEach((name, pool) -> {
			if (pool.isClosed()) {
				return;
			}
			SleepStatus status = pool.sleepStatus();
			PoolStatistics statistics = pool.statistics();
			long activity = statistics.requests() + statistics.returns() + status.wakes();
			long[] last = this.lastActivity.get(name);
			if (last == null || last[0] != activity) {
				this.lastActivity.put(name, new long[] { activity, now });
				return;
			}
			if (status.state() == SleepStatus.State.AWAKE && now - last[1] >= this.sleepAfterIdle.toNanos()) {
				this.lastActivity.put(name, new long[] { activity, now });
				try {
					SleepStatus.Sleep sleep = pool.sleep(SleepMode.OFFLOAD);
					LOGGER.log(System.Logger.Level.INFO, "Pool ''{0}'' idle for {1}: asleep, {2} bytes released",
							name, this.sleepAfterIdle, sleep.releasedBytes());
				}
				catch (RuntimeException ex) {
					LOGGER.log(System.Logger.Level.WARNING, "Pool '" + name + "' could not sleep after idling", ex);
				}
			}
		});
	}

	@Override
	public void close() {
		if (this.idleCheck != null) {
			this.idleCheck.shutdownNow();
		}
	}

}
