package io.gpumem.sample.kernels;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.gpumem.sample.ConditionalOnGpumem;
import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaBackend;

/** The kernels for the backend in use: the PTX on the cuda backend, Java on the host backend. */
@Configuration(proxyBeanMethods = false)
@ConditionalOnGpumem
class KernelsConfiguration {

	@Bean
	Kernels kernels(GpuBackend backend) {
		return (backend instanceof CudaBackend cuda) ? new CudaKernels(cuda) : new HostKernels();
	}

}
