package io.gpumem.pool;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

import io.gpumem.observation.MemoryObserver;

/** The flight-recorder event of a pool's sleep or wake, lasting as long as it took. */
@Name("io.gpumem.PoolSleep")
@Label("Pool Sleep")
@Category(MemoryObserver.JFR_CATEGORY)
@Description("A pool gave the device back the memory behind its lent buffers, or mapped it again")
@StackTrace(false)
final class PoolSleepEvent extends Event {

	@Label("Pool")
	String pool;

	@Label("Action")
	@Description("sleep or wake")
	String action;

	@Label("Mode")
	@Description("What a sleep did with the lent buffers' bytes: OFFLOAD or DISCARD; the cause of a wake")
	String mode;

	@Label("Device Bytes")
	@Description("Bytes of the device given back by a sleep, or mapped again by a wake")
	@DataAmount
	long deviceBytes;

	@Label("Host Bytes")
	@Description("Bytes copied to host memory by a sleep, or back by a wake")
	@DataAmount
	long hostBytes;

	/** An event of {@code pool}'s {@code action} begun now, committed when it ends. */
	static PoolSleepEvent begin(String pool, String action) {
		PoolSleepEvent event = new PoolSleepEvent();
		event.pool = pool;
		event.action = action;
		event.begin();
		return event;
	}

	void slept(SleepStatus.Sleep sleep) {
		commit(sleep.mode().name(), sleep.releasedBytes(), sleep.offloadedBytes());
	}

	void woke(SleepStatus.Wake wake) {
		commit(wake.cause(), wake.mappedBytes(), wake.restoredBytes());
	}

	private void commit(String mode, long deviceBytes, long hostBytes) {
		if (shouldCommit()) {
			this.mode = mode;
			this.deviceBytes = deviceBytes;
			this.hostBytes = hostBytes;
			commit();
		}
	}

}
