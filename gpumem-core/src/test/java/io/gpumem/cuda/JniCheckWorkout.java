package io.gpumem.cuda;

import java.io.IOException;
import java.io.InputStream;

/**
 * Every method of the JCuda binding once, on the stub driver, for a JVM started with {@code -Xcheck:jni}: the JVM's
 * own checker aborts where a native writes a field the object does not have, as JCuda 12.6.0's
 * {@code cuMemSetAccess} and {@code cuMemPoolCreate} did. Under the checker JCuda loses what the driver writes into
 * Java arrays (counts, versions, free bytes), so nothing here depends on those answers.
 */
final class JniCheckWorkout {

	private JniCheckWorkout() {
	}

	public static void main(String[] arguments) throws IOException {
		CudaDriver driver = CudaProbe.jcuda();
		driver.driverVersion();
		driver.init();
		driver.deviceCount();
		driver.deviceName(0);
		driver.pciBusId(0);
		driver.computeCapability(0);
		driver.concurrentManagedAccess(0);
		driver.virtualMemorySupported(0);
		Object context = driver.retainPrimaryContext(0);
		Object peerContext = driver.retainPrimaryContext(1);
		driver.setCurrentContext(context);
		driver.canAccessPeer(0, 1);
		driver.enablePeerAccess(peerContext);
		driver.memoryInfo();
		Object stream = driver.createStream();

		Object pool = driver.createMemoryPool(0);
		Object pooled = driver.allocateFromPool(pool, 4096, stream);
		driver.freeAsync(pooled, stream);
		driver.synchronizeStream(stream);
		driver.trimMemoryPool(pool, 0);
		driver.destroyMemoryPool(pool);

		long granule = driver.allocationGranularity(0);
		Object range = driver.reserveAddresses(granule);
		Object physical = driver.createPhysical(0, granule);
		driver.map(range, granule, physical);
		driver.setAccess(range, granule, 0);
		driver.memsetD8(range, (byte) 1, granule, null);
		driver.unmap(range, granule);
		driver.releasePhysical(physical);
		driver.freeAddresses(range, granule);

		Object device = driver.allocateDevice(1 << 16);
		Object other = driver.allocateDevice(1 << 16);
		Object pinned = driver.allocatePinned(1 << 16);
		Object managed = driver.allocateManaged(1 << 16);
		driver.pinnedView(pinned, 1 << 16).putInt(0, 42);
		driver.copyArrayToDevice(driver.offset(device, 256), new int[] { 1, 2, 3 }, 4, 8);
		driver.copyDeviceToArray(new long[4], 8, device, 16);
		driver.copyHostToDeviceAsync(device, pinned, 1024, stream);
		driver.copyDeviceToHostAsync(pinned, device, 1024, stream);
		driver.copyDeviceToDeviceAsync(other, device, 1024, stream);
		driver.memsetD8(device, (byte) 2, 64, stream);
		driver.memsetD32(device, 3, 16, null);
		driver.memsetD32(device, 4, 16, stream);
		driver.prefetch(managed, 1 << 16, 0, stream);
		driver.prefetch(managed, 1 << 16, -1, stream);

		driver.setCurrentContext(peerContext);
		Object onPeer = driver.allocateDevice(1 << 16);
		driver.setCurrentContext(context);
		driver.copyPeerAsync(onPeer, peerContext, device, context, 1024, stream);

		Object event = driver.createEvent();
		driver.recordEvent(event, stream);
		driver.queryEvent(event);
		driver.synchronizeEvent(event);
		driver.destroyEvent(event);

		Object module = driver.loadModule(ptx());
		Object function = driver.function(module, "arguments");
		driver.launchKernel(function, 1, 32, 0, stream, new Object[] { device, 2.5f, 7, 1L << 40, -0.125 });
		driver.synchronizeStream(stream);
		driver.synchronizeContext();
		driver.unloadModule(module);

		driver.destroyStream(stream);
		driver.freeDevice(managed);
		driver.freePinned(pinned);
		driver.freeDevice(other);
		driver.freeDevice(device);
		driver.setCurrentContext(peerContext);
		driver.freeDevice(onPeer);
		driver.releasePrimaryContext(1);
		driver.releasePrimaryContext(0);
		System.out.println("every binding method called");
	}

	private static byte[] ptx() throws IOException {
		try (InputStream in = JniCheckWorkout.class.getResourceAsStream("/kernels/arguments.ptx")) {
			byte[] text = in.readAllBytes();
			byte[] image = new byte[text.length + 1];
			System.arraycopy(text, 0, image, 0, text.length);
			return image;
		}
	}

}
