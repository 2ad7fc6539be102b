package io.gpumem.autoconfigure;

import org.springframework.context.ApplicationEvent;

import io.gpumem.pressure.PressureChange;
import io.gpumem.pressure.PressureHandler;

/** Published when a device's GPU memory pressure level changes, once per change. */
public class GpumemPressureChangedEvent extends ApplicationEvent {

	private final int device;

	private final PressureChange change;

	public GpumemPressureChangedEvent(PressureHandler source, int device, PressureChange change) {
		super(source);
		this.device = device;
		this.change = change;
	}

	/** The ordinal of the device whose pressure changed. */
	public int getDevice() {
		return this.device;
	}

	/** The levels before and after, and the utilization that caused the change. */
	public PressureChange getChange() {
		return this.change;
	}

}
