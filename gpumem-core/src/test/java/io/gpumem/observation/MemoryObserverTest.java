package io.gpumem.observation;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryKind;
import io.gpumem.observation.MemoryOperation.Type;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.pool.arena.Span;
import io.gpumem.stream.GpuStream;
import io.gpumem.transfer.Transfer;
import io.gpumem.transfer.TransferPart;
import io.gpumem.transfer.Transfers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** What a {@link MemoryObserver} is told: misses and transfers, each ended once, failures with their error. */
class MemoryObserverTest {

	private final HostBackend backend = new HostBackend(1L << 20, 64L << 10);

	private final StratifiedMemoryPool device = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE),
			PoolConfig.builder("device").sizeClasses(1024, 4096).build());

	private final StratifiedMemoryPool pinned = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.PINNED),
			PoolConfig.builder("pinned").build());

	private final Recorder recorder = new Recorder();

	@AfterEach
	void close() {
		this.device.close();
		this.pinned.close();
		this.backend.close();
	}

	@Test
	void aMissIsObservedAndAHitIsNot() {
		this.device.observeWith(this.recorder);
		this.device.acquire(1000).close();
		this.device.acquire(1000).close();
		assertThat(this.recorder.spans).containsExactly(
				new Recorded(new MemoryOperation(Type.ACQUIRE, "device", MemoryKind.DEVICE, 1024), "ended"));
	}

	@Test
	void aMissTheAllocatorRefusesEndsWithTheRefusal() {
		this.device.observeWith(this.recorder);
		assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> this.device.acquire(2L << 20));
		assertThat(this.recorder.spans).singleElement()
			.satisfies((span) -> assertThat(span.operation().bytes()).isEqualTo(2L << 20))
			.satisfies((span) -> assertThat(span.end()).startsWith("failed: GpuOutOfMemoryException"));
		assertThat(this.device.statistics().reservedBytes()).isZero();
	}

	@Test
	void aTransferIsObservedFromItsStartUntilItIsAwaited() {
		Transfers transfers = new Transfers(this.pinned);
		transfers.observeWith(this.recorder);
		this.pinned.observeWith(this.recorder);
		float[] values = { 1, 2, 3 };
		float[] back = new float[3];
		try (GpuStream stream = this.backend.createStream(); PooledBuffer buffer = this.device.acquire(12)) {
			Transfer upload = transfers.uploadAsync(stream, List.of(new TransferPart(values, buffer, 0)));
			assertThat(this.recorder.spans).extracting(Recorded::end).containsExactly("open", "ended");
			upload.await();
			upload.await();
			transfers.download(stream, buffer, 0, back);
		}
		assertThat(back).containsExactly(values);
		assertThat(this.recorder.spans).containsExactly(
				new Recorded(new MemoryOperation(Type.UPLOAD, "pinned", MemoryKind.PINNED, 12), "ended"),
				new Recorded(new MemoryOperation(Type.ACQUIRE, "pinned", MemoryKind.PINNED, 256), "ended"),
				new Recorded(new MemoryOperation(Type.DOWNLOAD, "pinned", MemoryKind.PINNED, 12), "ended"));
	}

	@Test
	void aTransferWhoseStagingIsRefusedEndsWithTheRefusal() {
		Transfers transfers = new Transfers(this.pinned);
		transfers.observeWith(this.recorder);
		float[] large = new float[32 << 10];
		try (GpuStream stream = this.backend.createStream(); PooledBuffer buffer = this.device.acquire(128L << 10)) {
			assertThatExceptionOfType(GpuOutOfMemoryException.class)
				.isThrownBy(() -> transfers.upload(stream, large, buffer, 0));
		}
		assertThat(this.recorder.spans).singleElement()
			.satisfies((span) -> assertThat(span.operation().type()).isEqualTo(Type.UPLOAD))
			.satisfies((span) -> assertThat(span.end()).startsWith("failed: GpuOutOfMemoryException"));
	}

	private record Recorded(MemoryOperation operation, String end) {

	}

	/** Records each operation and how it ended, checking that none ends twice. */
	private static final class Recorder implements MemoryObserver {

		private final List<Recorded> spans = new CopyOnWriteArrayList<>();

		@Override
		public Span start(MemoryOperation operation) {
			int index = this.spans.size();
			this.spans.add(new Recorded(operation, "open"));
			return (error) -> {
				assertThat(this.spans.get(index).end()).as("ended once").isEqualTo("open");
				this.spans.set(index, new Recorded(operation,
						(error != null) ? "failed: " + error.getClass().getSimpleName() : "ended"));
			};
		}

	}

}
