package io.gpumem.autoconfigure;

import java.util.List;

import io.gpumem.device.GpumemDevices;
import io.gpumem.pool.OutOfMemoryObserver;

/** Has every {@link OutOfMemoryObserver} bean observe every pool of every device. */
public final class OutOfMemoryObservers {

	OutOfMemoryObservers(GpumemDevices devices, List<OutOfMemoryObserver> observers) {
		devices.all().forEach((device) -> device.memoryPools().forEach((pool) -> observers.forEach(pool::addListener)));
	}

}
