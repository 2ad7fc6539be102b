package io.gpumem.autoconfigure;

import io.gpumem.pool.PoolConfig;

/**
 * Adjusts a pool's configuration in code once the {@code gpumem.*} properties are applied and before the pool
 * is built: a size-class ladder computed at startup, a warm-up read from elsewhere. Customizer beans run in
 * their {@code @Order}.
 */
@FunctionalInterface
public interface GpumemPoolCustomizer {

	/**
	 * @param pool the pool's name: {@code device}, {@code pinned} or {@code unified} on the primary device,
	 * {@code device1.pinned} on device 1
	 * @param config its configuration so far, to change in place
	 */
	void customize(String pool, PoolConfig.Builder config);

}
