package io.gpumem.autoconfigure;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.gpumem.pool.MemoryPool;

/**
 * The application's gpumem pools by name, in the order they were defined: what the endpoint, the
 * metrics and the health indicator show, and what the pressure handler shrinks.
 */
public final class GpumemPools {

	private final Map<String, MemoryPool> pools;

	public GpumemPools(List<? extends MemoryPool> pools) {
		Map<String, MemoryPool> byName = new LinkedHashMap<>();
		for (MemoryPool pool : pools) {
			MemoryPool previous = byName.putIfAbsent(pool.name(), pool);
			if (previous != null && previous != pool) {
				throw new IllegalStateException("two gpumem pools are named '" + pool.name() + "'");
			}
		}
		this.pools = Collections.unmodifiableMap(byName);
	}

	/** Every pool, keyed by name. */
	public Map<String, MemoryPool> asMap() {
		return this.pools;
	}

	/** The pool of that name, or {@code null}. */
	public MemoryPool get(String name) {
		return this.pools.get(name);
	}

}
