package io.gpumem.autoconfigure.observation;

import io.micrometer.observation.Observation;

import io.gpumem.observation.MemoryOperation;

/** The context of a {@code gpumem.acquire} or {@code gpumem.transfer} observation: the operation and its device. */
public final class MemoryObservationContext extends Observation.Context {

	private final MemoryOperation operation;

	private final String device;

	MemoryObservationContext(MemoryOperation operation, String device) {
		this.operation = operation;
		this.device = device;
	}

	/** The memory work observed. */
	public MemoryOperation getOperation() {
		return this.operation;
	}

	/** The device it is for, as the meters' {@code device} tag names it. */
	public String getDevice() {
		return this.device;
	}

}
