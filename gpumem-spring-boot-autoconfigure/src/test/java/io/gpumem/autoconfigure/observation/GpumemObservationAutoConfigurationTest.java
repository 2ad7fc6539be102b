package io.gpumem.autoconfigure.observation;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.GlobalObservationConvention;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.gpumem.autoconfigure.GpumemAutoConfiguration;
import io.gpumem.backend.GpuBackend;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.observation.MemoryOperation;
import io.gpumem.observation.MemoryObserver;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.stream.GpuStream;
import io.gpumem.transfer.Transfers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class GpumemObservationAutoConfigurationTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(GpumemAutoConfiguration.class, GpumemObservationAutoConfiguration.class))
		.withPropertyValues("gpumem.backend=host", "gpumem.host.capacity=64MB", "gpumem.pressure.enabled=false");

	@Test
	void withoutAnObservationRegistryNothingIsObserved() {
		this.runner.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(MemoryObserver.class));
	}

	@Test
	void aMissAndATransferAreObservedWithinTheRequestsObservation() {
		this.runner.withUserConfiguration(Observations.class).run((context) -> {
			ObservationRegistry registry = context.getBean(ObservationRegistry.class);
			Recorded recorded = context.getBean(Recorded.class);
			StratifiedMemoryPool device = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
			Transfers transfers = context.getBean(Transfers.class);
			Observation request = Observation.start("request", registry);
			try (Observation.Scope scope = request.openScope(); GpuStream stream = context.getBean(GpuBackend.class)
				.createStream(); PooledBuffer buffer = device.acquire(5000)) {
				transfers.upload(stream, new float[1000], buffer, 0);
			}
			request.stop();
			assertThat(recorded.stopped).extracting(Observation.Context::getName)
				.containsExactly("gpumem.acquire", "gpumem.acquire", "gpumem.transfer", "request");
			assertThat(recorded.stopped.get(0).getLowCardinalityKeyValues()).isEqualTo(KeyValues.of("pool", "device", "device", "0"));
			assertThat(recorded.stopped.get(0).getContextualName()).isEqualTo("gpumem acquire device");
			assertThat(recorded.stopped.get(1).getLowCardinalityKeyValues()).isEqualTo(KeyValues.of("pool", "pinned", "device", "0"));
			Observation.Context transfer = recorded.stopped.get(2);
			assertThat(transfer.getLowCardinalityKeyValues())
				.isEqualTo(KeyValues.of("device", "0", "direction", "upload"));
			assertThat(transfer.getHighCardinalityKeyValue("gpumem.bytes").getValue()).isEqualTo("4000");
			assertThat(recorded.stopped.subList(0, 3))
				.allSatisfy((observed) -> assertThat(observed.getParentObservation()).isSameAs(request));
			device.acquire(5000).close();
			assertThat(recorded.stopped).as("a hit is not observed").hasSize(4);
		});
	}

	@Test
	void aRefusedMissIsObservedWithItsError() {
		this.runner.withUserConfiguration(Observations.class).run((context) -> {
			StratifiedMemoryPool device = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class);
			assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> device.acquire(1L << 30));
			assertThat(context.getBean(Recorded.class).stopped).singleElement()
				.satisfies((observed) -> assertThat(observed.getError()).isInstanceOf(GpuOutOfMemoryException.class));
		});
	}

	@Test
	void bootsMeterHandlerTimesThemUnderTheirNames() {
		this.runner.withUserConfiguration(Meters.class).run((context) -> {
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			try (GpuStream stream = context.getBean(GpuBackend.class).createStream();
					PooledBuffer buffer = context.getBean("gpumemDevicePool", StratifiedMemoryPool.class).acquire(64)) {
				context.getBean(Transfers.class).download(stream, buffer, 0, new float[16]);
			}
			assertThat(meters.get("gpumem.transfer").tags("device", "0", "direction", "download").timer().count())
				.isEqualTo(1);
			assertThat(meters.get("gpumem.acquire").tags("pool", "device").timer().count()).isEqualTo(1);
		});
	}

	@Test
	void aGlobalConventionRenamesThem() {
		this.runner.withUserConfiguration(Observations.class).run((context) -> {
			context.getBean(ObservationRegistry.class).observationConfig().observationConvention(new Renaming());
			context.getBean("gpumemDevicePool", StratifiedMemoryPool.class).acquire(64).close();
			assertThat(context.getBean(Recorded.class).stopped).extracting(Observation.Context::getName)
				.containsExactly("my.acquire");
		});
	}

	/** As an application would rename gpumem's observations, registered as Boot registers such beans. */
	static class Renaming implements GlobalObservationConvention<MemoryObservationContext> {

		@Override
		public String getName() {
			return "my.acquire";
		}

		@Override
		public boolean supportsContext(Observation.Context context) {
			return context instanceof MemoryObservationContext memory
					&& memory.getOperation().type() == MemoryOperation.Type.ACQUIRE;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Observations {

		@Bean
		Recorded recorded() {
			return new Recorded();
		}

		@Bean
		ObservationRegistry observationRegistry(Recorded recorded) {
			ObservationRegistry registry = ObservationRegistry.create();
			registry.observationConfig().observationHandler(recorded);
			return registry;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Meters {

		@Bean
		MeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

		@Bean
		ObservationRegistry observationRegistry(MeterRegistry meters) {
			ObservationRegistry registry = ObservationRegistry.create();
			registry.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
			return registry;
		}

	}

	/** Every observation stopped, in order. */
	static class Recorded implements ObservationHandler<Observation.Context> {

		final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

		@Override
		public void onStop(Observation.Context context) {
			this.stopped.add(context);
		}

		@Override
		public boolean supportsContext(Observation.Context context) {
			return true;
		}

	}

}
