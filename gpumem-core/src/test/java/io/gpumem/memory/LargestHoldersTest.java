package io.gpumem.memory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.host.HostBackend;
import io.gpumem.pool.LeakDetection;
import io.gpumem.pool.OutOfMemoryObserver;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.pool.diagnostics.BufferRecording;
import io.gpumem.pool.diagnostics.HistoryConfig;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.tuple;

/**
 * An out-of-memory failure names the pool's largest holders by the code that acquired their buffers, and its
 * largest free block, and its observers get that report before the exception is thrown.
 */
class LargestHoldersTest {

	private static final long MIB = 1L << 20;

	private final HostBackend backend = new HostBackend(128 * MIB);

	private final List<PooledBuffer> held = new ArrayList<>();

	private StratifiedMemoryPool pool;

	@AfterEach
	void close() {
		this.held.forEach(PooledBuffer::close);
		this.pool.close();
	}

	@Test
	void theFailureNamesTheLargestHoldersByAcquiringCodeAndTheObserversHearItFirst() {
		this.pool = pool(BufferRecording.LARGE);
		AtomicReference<OutOfMemoryDiagnostic> observed = new AtomicReference<>();
		this.pool.addListener((OutOfMemoryObserver) (pool, report) -> observed.set(report));
		holdThreeOfSixteen();
		holdOneOfThirtyTwo();
		for (int i = 0; i < 100; i++) {
			this.held.add(this.pool.acquire(4096));
		}
		GpuOutOfMemoryException failure = catchFailure(64 * MIB);
		List<MemoryHolder> holders = failure.diagnostic().holders();
		assertThat(holders).extracting(MemoryHolder::bytes, MemoryHolder::buffers, MemoryHolder::sampled)
			.as("small buffers record no frames; those of 16 MiB or more always do")
			.containsExactly(tuple(48 * MIB, 3L, false),
					tuple(32 * MIB, 1L, false));
		assertThat(holders.get(0).frames().get(0)).startsWith(getClass().getName() + ".holdThreeOfSixteen(");
		assertThat(holders.get(1).frames().get(0)).startsWith(getClass().getName() + ".holdOneOfThirtyTwo(");
		assertThat(failure.getMessage()).contains("The largest holders: 48.00 MiB in 3 buffers acquired at "
				+ getClass().getName() + ".holdThreeOfSixteen(LargestHoldersTest.java:")
			.contains("32.00 MiB in 1 buffer acquired at")
			.containsPattern("The pool's largest free block is [0-9.]+ [KM]iB\\.");
		assertThat(observed.get()).as("the same report, before the throw").isEqualTo(failure.diagnostic());
		this.held.forEach(PooledBuffer::close);
		this.held.clear();
		assertThat(catchFailure(256 * MIB).diagnostic().holders()).as("closed buffers hold nothing").isEmpty();
	}

	@Test
	void everyBufferRecordsAtAllAndNoneAtOff() {
		this.pool = pool(BufferRecording.ALL);
		this.held.add(this.pool.acquire(4096));
		assertThat(catchFailure(128 * MIB).diagnostic().holders()).singleElement()
			.satisfies((holder) -> assertThat(holder.bytes()).isEqualTo(4096));
		this.held.forEach(PooledBuffer::close);
		this.held.clear();
		this.pool.close();
		this.pool = pool(BufferRecording.OFF);
		this.held.add(this.pool.acquire(32 * MIB));
		assertThat(catchFailure(100 * MIB).diagnostic().holders()).isEmpty();
	}

	@Test
	void anObserverNeitherStopsThePoolFreeingItsCacheNorHidesTheFailure() {
		this.pool = pool(BufferRecording.LARGE);
		this.pool.addListener((OutOfMemoryObserver) (pool, report) -> {
			throw new IllegalStateException("the observer broke");
		});
		this.pool.acquire(80 * MIB).close();
		try (PooledBuffer served = this.pool.acquire(96 * MIB)) {
			assertThat(served.size()).as("the cached 80 MiB were trimmed for it").isEqualTo(96 * MIB);
			assertThat(catchFailure(64 * MIB)).as("the failure, not the observer's exception").isNotNull();
		}
	}

	private void holdThreeOfSixteen() {
		for (int i = 0; i < 3; i++) {
			this.held.add(this.pool.acquire(16 * MIB));
		}
	}

	private void holdOneOfThirtyTwo() {
		this.held.add(this.pool.acquire(32 * MIB));
	}

	private GpuOutOfMemoryException catchFailure(long bytes) {
		return catchThrowableOfType(GpuOutOfMemoryException.class, () -> this.pool.acquire(bytes));
	}

	private StratifiedMemoryPool pool(BufferRecording recording) {
		return new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE), PoolConfig.builder("sites")
			.history(new HistoryConfig(recording, HistoryConfig.DEFAULT_EVENTS))
			.leakDetection(LeakDetection.DISABLED)
			.build());
	}

}
