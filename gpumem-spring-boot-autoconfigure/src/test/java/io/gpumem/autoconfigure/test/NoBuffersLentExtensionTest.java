package io.gpumem.autoconfigure.test;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.autoconfigure.GpumemPools;
import io.gpumem.device.GpuDevice;
import io.gpumem.device.GpumemDevices;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

class NoBuffersLentExtensionTest {

	private final HostBackend backend = new HostBackend(16L << 20);

	private final StratifiedMemoryPool device = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE),
			PoolConfig.builder("device").build());

	private final GpumemPools pools = new GpumemPools(
			new GpumemDevices(List.of(GpuDevice.builder(this.backend, this.device).build())));

	@AfterEach
	void close() {
		this.device.close();
	}

	@Test
	void aBufferStillLentFailsTheTestNamingThePoolAndWhatItLends() {
		try (PooledBuffer held = this.device.acquire(4096)) {
			assertThatExceptionOfType(AssertionError.class)
				.isThrownBy(() -> NoBuffersLentExtension.assertNoneLent(this.pools, Duration.ofMillis(50), "test()"))
				.withMessage("test() left buffers lent out: pool 'device' 1 buffer(s), 4.00 KiB; close every "
						+ "PooledBuffer (try-with-resources) or the scope that holds it");
		}
		assertThatCode(() -> NoBuffersLentExtension.assertNoneLent(this.pools, Duration.ZERO, "test()"))
			.doesNotThrowAnyException();
	}

	@Test
	void aBufferOnItsWayBackWithinTheGraceIsWaitedFor() throws Exception {
		PooledBuffer held = this.device.acquire(4096);
		Thread checking = Thread.currentThread();
		Thread closer = new Thread(() -> {
			await().atMost(Duration.ofMinutes(1)).until(() -> checking.getState() == Thread.State.TIMED_WAITING);
			held.close();
		});
		closer.start();
		assertThatCode(() -> NoBuffersLentExtension.assertNoneLent(this.pools, Duration.ofMinutes(1), "test()"))
			.doesNotThrowAnyException();
		closer.join();
	}

}
