package io.gpumem.cuda;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;

import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;

import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.stream.GpuEvent;
import io.gpumem.stream.GpuStream;

/**
 * Run in a JVM of its own on the stub driver, whose copies take {@code GPUMEM_STUB_KERNEL_MICROS}, with one carrier
 * thread (Java 21 and later): a virtual thread waits for a copy, by each way of waiting, while a second virtual thread
 * asks to run. It prints, for each, whether the second ran before the wait returned, as it can only where the wait
 * left the carrier.
 */
final class CarrierWorkout {

	private CarrierWorkout() {
	}

	public static void main(String[] arguments) throws Exception {
		ExecutorService virtual = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor")
			.invoke(null);
		CudaBackend backend = CudaBackend.open(0);
		StratifiedMemoryPool pinned = pool(backend, MemoryKind.PINNED);
		StratifiedMemoryPool device = pool(backend, MemoryKind.DEVICE);
		try (PooledBuffer host = pinned.acquire(4096); PooledBuffer target = device.acquire(4096)) {
			report("stream.synchronize", virtual, backend, host, target, GpuStream::synchronize);
			report("event.await", virtual, backend, host, target, (stream) -> {
				try (GpuEvent done = stream.record()) {
					done.await();
				}
			});
			report("cuStreamSynchronize", virtual, backend, host, target, (stream) -> {
				backend.makeContextCurrent();
				JCudaDriver.cuStreamSynchronize(stream.unwrap(CUstream.class));
			});
		}
		finally {
			device.close();
			pinned.close();
			backend.close();
			virtual.shutdown();
		}
	}

	private static void report(String wait, ExecutorService virtual, CudaBackend backend, PooledBuffer host,
			PooledBuffer target, Consumer<GpuStream> waiting) throws Exception {
		try (GpuStream stream = backend.createStream()) {
			CountDownLatch enqueued = new CountDownLatch(1);
			Future<Long> waiter = virtual.submit(() -> {
				stream.copy(host, target);
				enqueued.countDown();
				waiting.accept(stream);
				return System.nanoTime();
			});
			enqueued.await();
			Future<Long> other = virtual.submit(System::nanoTime);
			long otherRan = other.get();
			long waitReturned = waiter.get();
			System.out.println(wait + ": the other thread ran before the wait returned: " + (otherRan < waitReturned));
		}
	}

	private static StratifiedMemoryPool pool(CudaBackend backend, MemoryKind kind) {
		return new StratifiedMemoryPool(backend.allocator(kind), PoolConfig.builder(kind.name().toLowerCase()).build());
	}

}
