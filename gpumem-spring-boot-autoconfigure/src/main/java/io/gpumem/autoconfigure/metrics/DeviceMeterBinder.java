package io.gpumem.autoconfigure.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import io.gpumem.device.GpuDevice;
import io.gpumem.device.GpumemDevices;

/** Binds one subject's meters for every device gpumem manages, each tagged with the device's ordinal. */
abstract class DeviceMeterBinder implements MeterBinder {

	private final GpumemDevices devices;

	DeviceMeterBinder(GpumemDevices devices) {
		this.devices = devices;
	}

	@Override
	public final void bindTo(MeterRegistry registry) {
		for (GpuDevice gpu : this.devices.all()) {
			bind(registry, String.valueOf(gpu.ordinal()), gpu);
		}
	}

	/** Binds the meters of {@code gpu}, whose {@code device} tag is given. */
	abstract void bind(MeterRegistry registry, String device, GpuDevice gpu);

}
