package io.gpumem.pool;

import java.util.List;

/**
 * The recent events of a pool's bounded history, oldest first: what {@code /actuator/gpumem/{pool}/history}
 * answers, and the log a replay reads.
 *
 * @param pool the pool's name
 * @param events the events, by sequence
 */
public record PoolHistory(String pool, List<MemoryEvent> events) {

	public PoolHistory {
		events = List.copyOf(events);
	}

}
