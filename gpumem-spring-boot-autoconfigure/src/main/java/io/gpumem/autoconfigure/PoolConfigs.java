package io.gpumem.autoconfigure;

import java.util.List;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.core.env.Environment;
import org.springframework.util.unit.DataSize;

import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PoolPreset;
import io.gpumem.pool.diagnostics.HistoryConfig;

/** Builds pool configurations from the properties of one pool, then the {@link GpumemPoolCustomizer}s. */
final class PoolConfigs {

	private PoolConfigs() {
	}

	/**
	 * The configuration of one pool.
	 * @throws InvalidConfigurationPropertyValueException naming the property under {@code prefix} (or
	 * {@code gpumem.pressure.oom-retries}) whose value does not make a pool, a size-keyed entry as the
	 * {@code environment} spells it
	 */
	static PoolConfig from(String name, String prefix, GpumemProperties.Pool pool, PoolPreset preset,
			GpumemProperties properties, List<GpumemPoolCustomizer> customizers, Environment environment) {
		return InvalidProperties.named((setting) -> setting.equals("oom-retries") ? "gpumem.pressure.oom-retries"
				: setting.startsWith("history.") ? "gpumem." + setting
						: InvalidProperties.sizeKeyed(environment, prefix + "." + setting), () -> {
					PoolConfig.Builder builder = PoolConfig.builder(name)
						.preset(preset)
						.leakDetection(properties.getLeakDetection())
						.history(new HistoryConfig(properties.getHistory().getBuffers(),
								properties.getHistory().getEvents()))
						.oomRetries(properties.getPressure().getOomRetries())
						.idleTrimAfter(pool.getIdleTrimAfter())
						.sleepOnAcquire(pool.getSleep().getOnAcquire())
						.segmentSize(pool.getSegmentSize().toBytes())
						.mappingStep(pool.getMappingStep().toBytes());
					if (pool.getMaxWait() != null) {
						builder.maxWait(pool.getMaxWait());
					}
					if (!pool.getSizeClasses().isEmpty()) {
						builder.sizeClasses(pool.getSizeClasses().stream().mapToLong(DataSize::toBytes).toArray());
					}
					pool.getWarm().forEach((size, count) -> builder.warm(size.toBytes(), count));
					pool.getMaxCachedBuffers()
						.forEach((size, count) -> builder.maxCachedBuffers(size.toBytes(), count));
					if (pool.getMaxCached() != null) {
						builder.maxCachedBytes(pool.getMaxCached().toBytes());
					}
					customizers.forEach((customizer) -> customizer.customize(name, builder));
					return builder.build();
				});
	}

}
