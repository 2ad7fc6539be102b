package io.gpumem.sample;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.unit.DataSize;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.StratifiedMemoryPool;

/**
 * The host backend and device pool, built by hand until the auto-configuration builds them from
 * {@code gpumem.*} properties.
 */
@Configuration(proxyBeanMethods = false)
class MemoryConfiguration {

	@Bean
	HostBackend hostBackend(@Value("${gpumem.host.capacity:1GB}") DataSize capacity) {
		return new HostBackend(capacity.toBytes());
	}

	@Bean(destroyMethod = "close")
	StratifiedMemoryPool devicePool(HostBackend backend) {
		return new StratifiedMemoryPool(backend.allocator(MemoryKind.DEVICE), PoolConfig.builder("device").build());
	}

}
