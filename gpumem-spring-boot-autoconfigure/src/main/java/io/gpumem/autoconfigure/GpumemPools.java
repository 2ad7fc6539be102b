package io.gpumem.autoconfigure;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import io.gpumem.device.GpuDevice;
import io.gpumem.device.GpumemDevices;
import io.gpumem.pool.MemoryCache;

/**
 * Every device's pools by name, as each device lists them ({@link GpuDevice#pools()}), with the device each
 * draws on: what the endpoint shows and trims, and what the meters and the test support read.
 */
public final class GpumemPools {

	private final Map<String, MemoryCache> pools = new LinkedHashMap<>();

	private final Map<String, Integer> devices = new LinkedHashMap<>();

	/**
	 * The pools of every device, the primary's first.
	 * @throws IllegalStateException if two pools have the same name
	 */
	public GpumemPools(GpumemDevices devices) {
		for (GpuDevice device : devices.all()) {
			for (MemoryCache pool : device.pools()) {
				if (this.pools.putIfAbsent(pool.name(), pool) != null) {
					throw new IllegalStateException("two gpumem pools are named '" + pool.name() + "'");
				}
				this.devices.put(pool.name(), device.ordinal());
			}
		}
	}

	/** Every pool, keyed by name. */
	public Map<String, MemoryCache> asMap() {
		return Collections.unmodifiableMap(this.pools);
	}

	/** The pool of that name, or {@code null}. */
	public MemoryCache get(String name) {
		return this.pools.get(name);
	}

	/** The ordinal of the device the named pool draws on, or -1 for an unknown pool. */
	public int device(String name) {
		return this.devices.getOrDefault(name, -1);
	}

}
