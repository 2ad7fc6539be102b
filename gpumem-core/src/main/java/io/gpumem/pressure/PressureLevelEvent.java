package io.gpumem.pressure;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

import io.gpumem.observation.MemoryObserver;

/** The flight-recorder event of a change of a memory's pressure level. */
@Name("io.gpumem.PressureLevel")
@Label("Pressure Level Change")
@Category(MemoryObserver.JFR_CATEGORY)
@Description("A change of the pressure level of a device's memory or of pinned host memory")
@StackTrace(false)
final class PressureLevelEvent extends Event {

	@Label("Memory")
	String memory;

	@Label("From")
	String from;

	@Label("To")
	String to;

	@Label("Utilization")
	@Description("The share of the memory in use when the level changed, -1 when unknown")
	double utilization;

	static void record(PressureChange change) {
		PressureLevelEvent event = new PressureLevelEvent();
		if (event.shouldCommit()) {
			event.memory = change.memory().name();
			event.from = change.previous().name();
			event.to = change.level().name();
			event.utilization = change.utilization();
			event.commit();
		}
	}

}
