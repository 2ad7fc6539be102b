package io.gpumem.pressure;

/** Told of pressure level changes, once per change. */
@FunctionalInterface
public interface PressureListener {

	void pressureChanged(PressureChange change);

}
