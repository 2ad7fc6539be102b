package io.gpumem.host;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.GpuDeviceFailedException;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.stream.GpuStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HostBackendTest {

	@Test
	void capacityIsEnforcedToTheByte() {
		HostBackend backend = new HostBackend(10_000, 1_000);
		MemoryAllocator device = backend.allocator(MemoryKind.DEVICE);
		Allocation a = device.allocate(6_000);
		Allocation b = backend.allocator(MemoryKind.UNIFIED).allocate(4_000);
		assertThat(backend.memoryInfo().freeBytes()).isZero();
		assertThatThrownBy(() -> device.allocate(1)).isInstanceOf(GpuOutOfMemoryException.class)
			.hasMessageContaining("tried to allocate 1 B")
			.hasMessageContaining("total capacity of 9.77 KiB of which 0 B is free");
		device.free(a);
		assertThat(backend.memoryInfo().freeBytes()).isEqualTo(6_000);
		Allocation c = device.allocate(6_000);
		assertThat(c.size()).isEqualTo(6_000);
		assertThat(backend.allocator(MemoryKind.PINNED).memoryInfo().totalBytes()).isEqualTo(1_000);
		assertThatThrownBy(() -> backend.allocator(MemoryKind.PINNED).allocate(1_001))
			.isInstanceOf(GpuOutOfMemoryException.class);
		device.free(c);
		backend.allocator(MemoryKind.UNIFIED).free(b);
		assertThat(backend.memoryInfo().freeBytes()).isEqualTo(10_000);
	}

	@Test
	void concurrentAllocationsNeverExceedCapacity() throws InterruptedException {
		HostBackend backend = new HostBackend(64 * 1024);
		MemoryAllocator device = backend.allocator(MemoryKind.DEVICE);
		List<Thread> threads = new ArrayList<>();
		List<Allocation> held = Collections.synchronizedList(new ArrayList<>());
		for (int t = 0; t < 4; t++) {
			Thread thread = new Thread(() -> {
				for (int i = 0; i < 100; i++) {
					try {
						held.add(device.allocate(1024));
					}
					catch (GpuOutOfMemoryException expected) {
						// the device is full
					}
				}
			});
			thread.start();
			threads.add(thread);
		}
		for (Thread thread : threads) {
			thread.join();
		}
		assertThat(held).hasSize(64);
		assertThat(backend.memoryInfo().freeBytes()).isZero();
	}

	@Test
	void copiesEveryElementTypeInAndOut() {
		MemoryAllocator device = new HostBackend(1 << 20).allocator(MemoryKind.DEVICE);
		Allocation block = device.allocate(4096);
		block.copyFromHost(8, new double[] { 1.5, -2.25 }, 0, 2, ElementType.DOUBLE);
		block.copyFromHost(100, new byte[] { 9, 8, 7 }, 1, 2, ElementType.BYTE);
		double[] doubles = new double[2];
		block.copyToHost(8, doubles, 0, 2, ElementType.DOUBLE);
		byte[] bytes = new byte[3];
		block.copyToHost(100, bytes, 1, 2, ElementType.BYTE);
		assertThat(doubles).containsExactly(1.5, -2.25);
		assertThat(bytes).containsExactly(0, 8, 7);
		block.fill(0, 4096, (byte) 0x5A);
		int[] ints = new int[1];
		block.copyToHost(4092, ints, 0, 1, ElementType.INT);
		assertThat(ints[0]).isEqualTo(0x5A5A5A5A);
		assertThat(block.unwrap(ByteBuffer.class).capacity()).isEqualTo(4096);
		device.free(block);
	}

	@Test
	void freedBlocksRefuseUseAndSecondFree() {
		MemoryAllocator device = new HostBackend(1 << 20).allocator(MemoryKind.DEVICE);
		Allocation block = device.allocate(64);
		device.free(block);
		assertThatIllegalStateException().isThrownBy(() -> block.fill(0, 64, (byte) 1))
			.withMessageContaining("used after free");
		assertThatIllegalStateException().isThrownBy(() -> device.free(block)).withMessageContaining("freed twice");
		assertThat(device.memoryInfo().freeBytes()).isEqualTo(1 << 20);
	}

	@Test
	void aRequestAboveTheCapacityIsOutOfMemoryAsOnADeviceWhateverItsSize() {
		MemoryAllocator device = new HostBackend(1 << 20).allocator(MemoryKind.DEVICE);
		for (long bytes : new long[] { (1 << 20) + 1, 3L << 30, 1L << 50, Long.MAX_VALUE }) {
			assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> device.allocate(bytes))
				.satisfies((ex) -> assertThat(ex.diagnostic().exceedsCapacity()).isTrue());
		}
		assertThat(device.memoryInfo().freeBytes()).isEqualTo(1 << 20);
		MemoryAllocator large = new HostBackend(4L << 30).allocator(MemoryKind.DEVICE);
		assertThatIllegalArgumentException().isThrownBy(() -> large.allocate(3L << 30))
			.withMessageContaining("largest block");
		assertThat(large.memoryInfo().freeBytes()).as("nothing kept reserved").isEqualTo(4L << 30);
	}

	@Test
	void everyBlockStartsOn256BytesOfItsNativeAddressAsCuMemAllocs() {
		HostBackend backend = new HostBackend(1L << 30);
		StratifiedMemoryPool pool = new StratifiedMemoryPool(backend.allocator(MemoryKind.DEVICE),
				PoolConfig.builder("aligned").build());
		List<PooledBuffer> held = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			long bytes = Math.max(4, Math.round(4 * Math.pow(80.0 * (1 << 20) / 4, i / 39.0)));
			PooledBuffer buffer = pool.acquire(bytes);
			held.add(buffer);
			assertThat(buffer.unwrap(ByteBuffer.class).alignmentOffset(0, 256)).as("a buffer of %d bytes", bytes)
				.isZero();
		}
		assertThat(held.get(39).size()).isEqualTo(80L << 20);
		held.forEach(PooledBuffer::close);
		assertThat(backend.allocator(MemoryKind.PINNED).allocate(3).unwrap(ByteBuffer.class).alignmentOffset(0, 256))
			.isZero();
		pool.close();
	}

	@Test
	void aPoolRequestOfAPebibyteIsOutOfMemoryAndLeavesThePoolUsable() {
		HostBackend backend = new HostBackend(64L << 20);
		StratifiedMemoryPool pool = new StratifiedMemoryPool(backend.allocator(MemoryKind.DEVICE),
				PoolConfig.builder("device").build());
		try (PooledBuffer before = pool.acquire(1 << 20)) {
			assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> pool.acquire(1L << 50))
				.withMessageContaining("tried to allocate 1.00 PiB");
			before.fill((byte) 1);
		}
		try (PooledBuffer after = pool.acquire(32L << 20)) {
			after.fill((byte) 2);
		}
		assertThat(pool.statistics().allocationFailures()).isEqualTo(1);
		assertThat(pool.statistics().inUseBytes()).isZero();
		pool.close();
		assertThat(backend.memoryInfo().freeBytes()).isEqualTo(64L << 20);
	}

	@Test
	void anInjectedFaultFailsTheDeviceForGoodAtTheAcquireAfterTheNextN() {
		HostBackend backend = new HostBackend(64L << 20);
		StratifiedMemoryPool pool = new StratifiedMemoryPool(backend.allocator(MemoryKind.DEVICE),
				PoolConfig.builder("device").build());
		StratifiedMemoryPool pinned = new StratifiedMemoryPool(backend.allocator(MemoryKind.PINNED),
				PoolConfig.builder("pinned").build());
		GpuStream stream = backend.createStream();
		backend.health().injectFault(10);
		PooledBuffer kept = pool.acquire(1 << 20);
		for (int i = 1; i < 10; i++) {
			(i % 2 == 0 ? pool : pinned).acquire(4096).close();
		}
		assertThat(backend.health().isFailed()).isFalse();
		assertThatExceptionOfType(GpuDeviceFailedException.class).isThrownBy(() -> pool.acquire(4096))
			.satisfies((ex) -> assertThat(ex.failure().error()).isEqualTo("CUDA_ERROR_ILLEGAL_ADDRESS (700)"));
		for (Runnable call : new Runnable[] { () -> pinned.acquire(4096), () -> kept.copyFrom(new byte[4]),
				() -> stream.fill(kept, 0, 4, (byte) 1), stream::synchronize, backend::createStream,
				() -> backend.allocator(MemoryKind.DEVICE).allocate(256) }) {
			assertThatExceptionOfType(GpuDeviceFailedException.class).isThrownBy(call::run);
		}
		stream.close();
		kept.close();
		pool.close();
		pinned.close();
		assertThat(backend.memoryInfo().freeBytes()).as("shutdown gave everything back").isEqualTo(64L << 20);
	}

	@Test
	void badSizesAreRefusedWithTheRule() {
		MemoryAllocator device = new HostBackend(1 << 20).allocator(MemoryKind.DEVICE);
		assertThatIllegalArgumentException().isThrownBy(() -> device.allocate(0)).withMessageContaining("positive: 0");
		assertThatIllegalArgumentException().isThrownBy(() -> device.allocate(-7)).withMessageContaining("-7");
		assertThatIllegalArgumentException().isThrownBy(() -> new HostBackend(-1))
			.withMessage("capacity must be positive, not -1");
		assertThat(device.memoryInfo().freeBytes()).isEqualTo(1 << 20);
	}

}
