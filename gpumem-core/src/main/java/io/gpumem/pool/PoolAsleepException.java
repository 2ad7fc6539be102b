package io.gpumem.pool;

import io.gpumem.memory.GpuMemoryException;

/** Thrown by an acquire, or a use of a lent buffer, while its pool sleeps and is configured to refuse. */
public class PoolAsleepException extends GpuMemoryException {

	public PoolAsleepException(String message) {
		super(message);
	}

}
