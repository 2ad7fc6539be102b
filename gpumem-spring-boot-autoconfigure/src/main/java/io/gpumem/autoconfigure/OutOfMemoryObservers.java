package io.gpumem.autoconfigure;

import java.util.List;

import io.gpumem.device.GpumemDevices;
import io.gpumem.pool.OutOfMemoryObserver;

/** Has every {@link OutOfMemoryObserver} bean observe every pool of every device. */
public final class OutOfMemoryObservers {

	private final List<OutOfMemoryObserver> observers;

	OutOfMemoryObservers(GpumemDevices devices, List<OutOfMemoryObserver> observers) {
		this.observers = List.copyOf(observers);
		devices.all()
			.forEach((device) -> device.memoryPools().forEach((pool) -> this.observers.forEach(pool::addListener)));
	}

	/** The observers, in order. */
	public List<OutOfMemoryObserver> observers() {
		return this.observers;
	}

}
