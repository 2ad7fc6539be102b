package io.gpumem.autoconfigure;

import java.util.List;

import io.gpumem.backend.GpuBackend;
import io.gpumem.device.BackendSelection;

/**
 * The backend of every device gpumem manages, the primary's first. Closing closes the others' backends;
 * the primary's is the {@link GpuBackend} bean, closed as such.
 */
final class GpumemBackends implements AutoCloseable {

	private final List<BackendSelection> selections;

	GpumemBackends(List<BackendSelection> selections) {
		this.selections = List.copyOf(selections);
	}

	BackendSelection primary() {
		return this.selections.get(0);
	}

	List<GpuBackend> secondaries() {
		return this.selections.subList(1, this.selections.size()).stream().map(BackendSelection::backend).toList();
	}

	@Override
	public void close() {
		secondaries().forEach(GpuBackend::close);
	}

}
