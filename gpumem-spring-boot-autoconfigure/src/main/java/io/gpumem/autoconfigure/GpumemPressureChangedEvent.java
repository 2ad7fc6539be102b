package io.gpumem.autoconfigure;

import org.springframework.context.ApplicationEvent;

import io.gpumem.pressure.PressureChange;
import io.gpumem.pressure.PressureHandler;

/** Published when the GPU memory pressure level changes, once per change. */
public class GpumemPressureChangedEvent extends ApplicationEvent {

	private final PressureChange change;

	public GpumemPressureChangedEvent(PressureHandler source, PressureChange change) {
		super(source);
		this.change = change;
	}

	/** The levels before and after, and the utilization that caused the change. */
	public PressureChange getChange() {
		return this.change;
	}

}
