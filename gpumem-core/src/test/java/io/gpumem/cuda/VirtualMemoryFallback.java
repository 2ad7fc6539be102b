package io.gpumem.cuda;

import java.util.Arrays;

import io.gpumem.backend.VirtualMemory;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;

/**
 * What a device pool on device 0 gets where the driver's virtual memory cannot be used, for a JVM of its own on
 * another driver library or class path: prints the probe's reason, whether a pool over what the backend offers
 * keeps a buffer's bytes, what the stream-ordered pool says, and, where JNA can ask the stub, what it still holds
 * once everything is closed.
 */
final class VirtualMemoryFallback {

	private VirtualMemoryFallback() {
	}

	public static void main(String[] arguments) {
		CudaBackend backend = CudaBackend.open(0);
		VirtualMemory virtualMemory = backend.virtualMemory();
		System.out.println("reason=" + virtualMemory.reason());
		System.out.println("pool keeps its bytes=" + poolKeepsBytes(backend, virtualMemory));
		try {
			backend.streamOrderedAllocator();
			System.out.println("stream-ordered pool=created");
		}
		catch (RuntimeException ex) {
			System.out.println("stream-ordered pool=" + ex.getMessage());
		}
		backend.close();
		if (arguments.length > 0 && arguments[0].equals("holdings")) {
			System.out.println("held=" + StubDriver.loaded().holdings());
		}
	}

	/** Whether a device pool over what the backend offers gives back the bytes written into a buffer of it. */
	static boolean poolKeepsBytes(CudaBackend backend, VirtualMemory virtualMemory) {
		try (StratifiedMemoryPool pool = new StratifiedMemoryPool(
				virtualMemory.allocatorOr(backend.allocator(MemoryKind.DEVICE)), PoolConfig.builder("device").build());
				PooledBuffer buffer = pool.acquire(10_000)) {
			long[] values = { 7, 11, 13 };
			long[] back = new long[values.length];
			buffer.copyFrom(values);
			buffer.copyTo(back);
			return Arrays.equals(back, values);
		}
	}

}
