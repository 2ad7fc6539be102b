package io.gpumem.backend;

import java.util.Locale;

/** Which backend to use: as the {@code gpumem.backend} property spells it. */
public enum BackendType {

	/** CUDA when a usable device is found, the host backend otherwise. */
	AUTO,

	/** CUDA, failing if no usable device is found. */
	CUDA,

	/** The host backend, emulating a device in off-heap memory. */
	HOST;

	/** The name in configuration: {@code auto}, {@code cuda} or {@code host}. */
	public String configName() {
		return name().toLowerCase(Locale.ROOT);
	}

}
