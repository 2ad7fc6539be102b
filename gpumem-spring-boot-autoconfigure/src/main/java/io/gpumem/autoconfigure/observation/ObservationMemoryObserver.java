package io.gpumem.autoconfigure.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

import io.gpumem.observation.MemoryObserver;
import io.gpumem.observation.MemoryOperation;
import io.gpumem.pool.arena.Span;

/** Turns the memory work gpumem's core reports into Micrometer Observations. */
final class ObservationMemoryObserver implements MemoryObserver {

	private final ObservationRegistry registry;

	private final String device;

	ObservationMemoryObserver(ObservationRegistry registry, String device) {
		this.registry = registry;
		this.device = device;
	}

	@Override
	public Span start(MemoryOperation operation) {
		Observation observation = Observation
			.createNotStarted(null, DefaultMemoryObservationConvention.of(operation),
					() -> new MemoryObservationContext(operation, this.device), this.registry)
			.start();
		return (error) -> {
			if (error != null) {
				observation.error(error);
			}
			observation.stop();
		};
	}

}
