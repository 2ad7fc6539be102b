package io.gpumem.host;

import org.junit.jupiter.api.Test;

import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.stream.GpuEvent;
import io.gpumem.stream.GpuStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** The host backend's streams run work at once, so release after a stream is immediate. */
class HostStreamTest {

	private final HostBackend backend = new HostBackend(64L << 20);

	@Test
	void copiesAndFillsRunAtOnceAndEventsAreComplete() {
		try (StratifiedMemoryPool device = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE),
				PoolConfig.builder("device").build());
				StratifiedMemoryPool pinned = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.PINNED),
						PoolConfig.builder("pinned").build());
				GpuStream stream = this.backend.createStream();
				PooledBuffer staging = pinned.acquire(1000);
				PooledBuffer target = device.acquire(1000)) {
			staging.copyFrom(new int[] { 1, 2, 3, 4 });
			stream.fill(target, 0, 1000, (byte) 0);
			stream.copy(staging, 4, target, 8, 12);
			GpuEvent event = stream.record();
			assertThat(event.isComplete()).isTrue();
			int[] back = new int[5];
			target.copyTo(back);
			assertThat(back).containsExactly(0, 0, 2, 3, 4);
			assertThatExceptionOfType(IndexOutOfBoundsException.class)
				.isThrownBy(() -> stream.copy(staging, 996, target, 0, 8));
			assertThatIllegalArgumentException().isThrownBy(() -> stream.prefetchToDevice(target));
		}
	}

	@Test
	void aBufferClosedAfterAStreamIsReusedAtOnce() {
		try (StratifiedMemoryPool device = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE),
				PoolConfig.builder("device").build()); GpuStream stream = this.backend.createStream()) {
			PooledBuffer buffer = device.acquire(4096);
			stream.fill(buffer, 0, 4096, (byte) 1);
			buffer.closeAfter(stream);
			assertThat(buffer.isClosed()).isTrue();
			device.acquire(4096).close();
			assertThat(device.statistics().hits()).isEqualTo(1);
			assertThat(device.statistics().inUseBuffers()).isZero();
		}
	}

}
