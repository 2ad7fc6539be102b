package io.gpumem.autoconfigure;

import java.util.List;

import io.gpumem.device.GpuDevice;

/** The devices other than the primary, each with every part of its own, closed with the context. */
final class SecondaryDevices implements AutoCloseable {

	private final List<GpuDevice> devices;

	SecondaryDevices(List<GpuDevice> devices) {
		this.devices = List.copyOf(devices);
	}

	List<GpuDevice> devices() {
		return this.devices;
	}

	@Override
	public void close() {
		this.devices.forEach(GpuDevice::close);
	}

}
