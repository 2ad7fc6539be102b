package io.gpumem.pool.diagnostics;

import java.util.List;

/**
 * The recent events of a pool's bounded history, oldest first: what {@code /actuator/gpumem/{pool}/history}
 * answers, and the log a replay reads.
 *
 * @param pool the pool's name
 * @param complete whether it holds every event since the pool started: none was dropped to make room
 * @param events the events, by sequence
 */
public record PoolHistory(String pool, boolean complete, List<MemoryEvent> events) {

	public PoolHistory {
		events = List.copyOf(events);
	}

}
