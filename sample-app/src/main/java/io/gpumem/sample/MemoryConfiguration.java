package io.gpumem.sample;

import java.util.Locale;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.unit.DataSize;

import io.gpumem.backend.BackendSelection;
import io.gpumem.backend.BackendType;
import io.gpumem.backend.GpuBackend;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.StratifiedMemoryPool;

/**
 * The backend and device pool, built by hand until the auto-configuration builds them from
 * {@code gpumem.*} properties.
 */
@Configuration(proxyBeanMethods = false)
class MemoryConfiguration {

	@Bean
	BackendSelection backendSelection(@Value("${gpumem.backend:auto}") String backend,
			@Value("${gpumem.device:0}") int device, @Value("${gpumem.host.capacity:1GB}") DataSize capacity) {
		return BackendSelection.select(BackendType.valueOf(backend.toUpperCase(Locale.ROOT)), device,
				capacity.toBytes());
	}

	@Bean(destroyMethod = "close")
	GpuBackend gpuBackend(BackendSelection selection) {
		return selection.backend();
	}

	@Bean(destroyMethod = "close")
	StratifiedMemoryPool devicePool(GpuBackend backend) {
		return new StratifiedMemoryPool(backend.allocator(MemoryKind.DEVICE), PoolConfig.builder("device").build());
	}

}
