package io.gpumem.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.ApplicationEventPublisher;

import io.gpumem.device.GpuDevice;
import io.gpumem.device.GpumemDevices;
import io.gpumem.pool.MemoryCache;
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

	private final List<MemoryPool> devicePools = new ArrayList<>();

	/** Per device pool, its activity count when it last changed, and when that was; read on the idle check's thread. */
	private final Map<MemoryPool, long[]> lastActivity = new IdentityHashMap<>();

	private final Duration sleepAfterIdle;

	private final ScheduledExecutorService idleCheck;

	/**
	 * Publishes the sleeps and wakes of every pool of {@code devices} to {@code events}, and sleeps each device's
	 * device pool idle for {@code sleepAfterIdle} (0 for never).
	 * @throws InvalidConfigurationPropertyValueException if {@code sleepAfterIdle} is negative
	 */
	PoolSleeps(GpumemDevices devices, ApplicationEventPublisher events, Duration sleepAfterIdle) {
		if (sleepAfterIdle.isNegative()) {
			throw new InvalidConfigurationPropertyValueException(SLEEP_AFTER_IDLE, sleepAfterIdle,
					"must be zero (never) or more");
		}
		this.sleepAfterIdle = sleepAfterIdle;
		PoolListener publisher = new PoolListener() {

			@Override
			public void slept(MemoryPool slept, SleepStatus.Sleep sleep) {
				events.publishEvent(new GpumemSleepEvent(slept, sleep, null));
			}

			@Override
			public void woke(MemoryPool woken, SleepStatus.Wake wake) {
				events.publishEvent(new GpumemSleepEvent(woken, null, wake));
			}

		};
		for (GpuDevice device : devices.all()) {
			for (MemoryCache cache : device.pools()) {
				if (cache instanceof MemoryPool pool) {
					pool.addListener(publisher);
				}
			}
			this.devicePools.add(device.devicePool());
		}
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
		for (MemoryPool pool : this.devicePools) {
			if (!pool.isClosed()) {
				sleepIfIdle(pool, now);
			}
		}
	}

	private void sleepIfIdle(MemoryPool pool, long now) {
		SleepStatus status = pool.sleepStatus();
		PoolStatistics statistics = pool.statistics();
		long activity = statistics.requests() + statistics.returns() + status.wakes();
		long[] last = this.lastActivity.get(pool);
		if (last == null || last[0] != activity) {
			this.lastActivity.put(pool, new long[] { activity, now });
			return;
		}
		if (status.state() == SleepStatus.State.AWAKE && now - last[1] >= this.sleepAfterIdle.toNanos()) {
			this.lastActivity.put(pool, new long[] { activity, now });
			try {
				SleepStatus.Sleep sleep = pool.sleep(SleepMode.OFFLOAD);
				LOGGER.log(System.Logger.Level.INFO, "Pool ''{0}'' idle for {1}: asleep, {2} bytes released",
						pool.name(), this.sleepAfterIdle, sleep.releasedBytes());
			}
			catch (RuntimeException ex) {
				LOGGER.log(System.Logger.Level.WARNING, "Pool '" + pool.name() + "' could not sleep after idling", ex);
			}
		}
	}

	@Override
	public void close() {
		if (this.idleCheck != null) {
			this.idleCheck.shutdownNow();
		}
	}

}
