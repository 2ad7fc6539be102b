package io.gpumem.autoconfigure.diagnostics;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.core.io.support.SpringFactoriesLoader.FailureHandler;

import io.gpumem.backend.BackendType;
import io.gpumem.cuda.CudaProbe;
import io.gpumem.cuda.CudaUnavailableException;
import io.gpumem.device.BackendSelection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

class CudaUnavailableFailureAnalyzerTest {

	@Test
	void isRegisteredAsAFailureAnalyzer() {
		List<String> names = SpringFactoriesLoader.forDefaultResourceLocation()
			.load(FailureAnalyzer.class, null, FailureHandler.handleMessage((message, ex) -> {
			}))
			.stream()
			.map((analyzer) -> analyzer.getClass().getName())
			.toList();
		assertThat(names).contains(CudaUnavailableFailureAnalyzer.class.getName());
	}

	@Test
	void explainsWhyTheDeviceIsNotUsableAndWhatToDo() {
		assumeFalse(CudaProbe.probe(0).usable(), "a usable CUDA device is present");
		CudaUnavailableException unavailable = catchThrowableOfType(CudaUnavailableException.class,
				() -> BackendSelection.select(BackendType.CUDA, 0, 1 << 20));
		FailureAnalysis analysis = new CudaUnavailableFailureAnalyzer()
			.analyze(new BeanCreationException("gpuBackend", "could not create", unavailable));
		assertThat(analysis.getDescription()).contains("gpumem.backend is 'cuda'", unavailable.probe().reason());
		assertThat(analysis.getAction()).contains("gpumem.backend", "'auto'");
	}

}
