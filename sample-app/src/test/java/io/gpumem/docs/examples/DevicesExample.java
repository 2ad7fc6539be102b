package io.gpumem.docs.examples;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.device.GpuDevice;
import io.gpumem.device.GpumemDevices;

/** The use of several GPUs of docs/multiple-gpus.md. */
class DevicesExample {

	void run(GpumemDevices devices, long bytes) {
		// tag::devices[]
		GpuDevice device = devices.get(1);                 // by ordinal
		GpuDevice idle = devices.leastLoaded();            // the smallest share of its budget lent
		try (GpumemDevices.Binding bound = devices.bind(2)) {
			process(devices.current());                    // the thread's device until the binding closes
		}
		try (GpuBuffer a = device.devicePool().acquire(bytes); GpuBuffer b = idle.devicePool().acquire(bytes)) {
			devices.copy(device, a, idle, b, bytes);       // peer to peer, or staged through pinned memory
		}
		// end::devices[]
	}

	private void process(GpuDevice device) {
	}

}
