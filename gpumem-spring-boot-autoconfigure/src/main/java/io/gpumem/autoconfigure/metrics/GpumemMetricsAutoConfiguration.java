package io.gpumem.autoconfigure.metrics;

import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.allocator.MemoryBudget;
import io.gpumem.autoconfigure.GpumemAutoConfiguration;
import io.gpumem.autoconfigure.GpumemPools;
import io.gpumem.backend.GpuBackend;
import io.gpumem.pressure.PressureHandler;
import io.gpumem.transfer.Transfers;

/** gpumem's Micrometer meters, when Micrometer is present; Boot binds the binder to its registries. */
@AutoConfiguration(after = GpumemAutoConfiguration.class)
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({ GpuBackend.class, GpumemPools.class })
public final class GpumemMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	GpumemMeterBinder gpumemMeterBinder(GpuBackend backend, GpumemPools pools,
			ObjectProvider<PressureHandler> pressure, ObjectProvider<GpuAdmission> admission,
			ObjectProvider<MemoryBudget> budget, ObjectProvider<Transfers> transfers) {
		return new GpumemMeterBinder(backend, pools, new GpumemMeterBinder.Parts(pressure.getIfAvailable(),
				admission.getIfAvailable(), budget.getIfUnique(), transfers.getIfUnique()));
	}

}
