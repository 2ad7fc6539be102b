package io.gpumem.autoconfigure;

import org.jspecify.annotations.Nullable;

import org.springframework.context.ApplicationEvent;

import io.gpumem.pool.MemoryPool;
import io.gpumem.pool.SleepStatus;

/** Published when a pool falls asleep or wakes ({@link MemoryPool#sleep}), once each, with what it did. */
public class GpumemSleepEvent extends ApplicationEvent {

	private final SleepStatus.@Nullable Sleep sleep;

	private final SleepStatus.@Nullable Wake wake;

	public GpumemSleepEvent(MemoryPool source, SleepStatus.@Nullable Sleep sleep, SleepStatus.@Nullable Wake wake) {
		super(source);
		if ((sleep == null) == (wake == null)) {
			throw new IllegalArgumentException("a sleep event is of a sleep or a wake, one of the two");
		}
		this.sleep = sleep;
		this.wake = wake;
	}

	/** The pool that fell asleep or woke. */
	public MemoryPool getPool() {
		return (MemoryPool) getSource();
	}

	/** What the sleep did, or null for a wake. */
	public SleepStatus.@Nullable Sleep getSleep() {
		return this.sleep;
	}

	/** What the wake did, or null for a sleep. */
	public SleepStatus.@Nullable Wake getWake() {
		return this.wake;
	}

}
