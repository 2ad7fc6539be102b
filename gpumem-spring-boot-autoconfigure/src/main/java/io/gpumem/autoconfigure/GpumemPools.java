package io.gpumem.autoconfigure;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.gpumem.pool.MemoryPool;

/**
 * The application's gpumem pools by name, in the order they were defined, with the device each draws on:
 * what the endpoint, the metrics and the health indicator show, and what the pressure handlers shrink.
 */
public final class GpumemPools {

	private final Map<String, MemoryPool> pools = new LinkedHashMap<>();

	private final Map<String, Integer> devices = new LinkedHashMap<>();

	/** The pools of one device. */
	public GpumemPools(int device, List<? extends MemoryPool> pools) {
		this(Map.of(device, pools));
	}

	/**
	 * The pools of each device, keyed by ordinal.
	 * @throws IllegalStateException if two pools have the same name
	 */
	public GpumemPools(Map<Integer, ? extends List<? extends MemoryPool>> poolsByDevice) {
		poolsByDevice.forEach((device, pools) -> {
			for (MemoryPool pool : pools) {
				MemoryPool previous = this.pools.putIfAbsent(pool.name(), pool);
				if (previous != null && previous != pool) {
					throw new IllegalStateException("two gpumem pools are named '" + pool.name() + "'");
				}
				this.devices.put(pool.name(), device);
			}
		});
	}

	/** Every pool, keyed by name. */
	public Map<String, MemoryPool> asMap() {
		return Collections.unmodifiableMap(this.pools);
	}

	/** The pool of that name, or {@code null}. */
	public MemoryPool get(String name) {
		return this.pools.get(name);
	}

	/** The ordinal of the device the named pool draws on, or -1 for an unknown pool. */
	public int device(String name) {
		return this.devices.getOrDefault(name, -1);
	}

}
