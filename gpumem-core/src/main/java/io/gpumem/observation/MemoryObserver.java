package io.gpumem.observation;

/**
 * Brackets gpumem's slow memory work, a pool's miss that reserves memory from its allocator and a staged
 * transfer, so that a tracer (Micrometer's Observation, in the starter) shows it within the request.
 */
@FunctionalInterface
public interface MemoryObserver {

	/** Observes nothing. */
	MemoryObserver NONE = (operation) -> Span.NONE;

	/** The category of gpumem's flight-recorder events, as JDK Mission Control groups them. */
	String JFR_CATEGORY = "GPU Memory";

	/** Called as {@code operation} starts, on the thread that starts it. */
	Span start(MemoryOperation operation);

	/** One operation in progress. */
	@FunctionalInterface
	interface Span {

		/** A span that records nothing. */
		Span NONE = (error) -> {
		};

		/** Called once, when the operation has ended: {@code error} is what it failed with, null if it did not. */
		void end(Throwable error);

	}

}
