package io.gpumem.scope;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.stream.GpuStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class MemoryScopeTest {

	private final HostBackend backend = new HostBackend(64L << 20);

	private final StratifiedMemoryPool pool = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE),
			PoolConfig.builder("device").build());

	@AfterEach
	void closePool() {
		this.pool.close();
		assertThat(this.backend.memoryInfo().usedBytes()).isZero();
	}

	@Test
	void countsCurrentAndPeakBytesAndTypedAllocations() {
		try (MemoryScope scope = MemoryScope.open("bfs", this.pool)) {
			ScopedBuffer frontier = scope.allocate(1024);
			ScopedBuffer visited = scope.allocate(10_000 / 8);
			ScopedBuffer distances = scope.allocate(int.class, 10_000);
			assertThat(distances.elementType()).isEqualTo(ElementType.INT);
			assertThat(distances.elementCount()).isEqualTo(10_000);
			assertThat(distances.size()).isEqualTo(40_000);
			ScopeStatistics stats = scope.statistics();
			assertThat(stats.currentBytes()).isEqualTo(1024 + 1250 + 40_000);
			assertThat(stats.peakBytes()).isEqualTo(stats.currentBytes());
			assertThat(stats.allocations()).isEqualTo(3);
			assertThat(stats.typedAllocations()).isEqualTo(1);
			assertThat(stats.openBuffers()).isEqualTo(3);

			distances.close();
			distances.close();
			stats = scope.statistics();
			assertThat(stats.currentBytes()).as("a buffer closed on its own leaves the books right")
				.isEqualTo(1024 + 1250);
			assertThat(stats.peakBytes()).isEqualTo(1024 + 1250 + 40_000);
			assertThat(stats.openBuffers()).isEqualTo(2);
			frontier.copyFrom(new long[] { 42 });
			assertThat(visited.isClosed()).isFalse();
		}
		assertThat(this.pool.statistics().inUseBuffers()).isZero();
		assertThat(this.pool.statistics().returns()).isEqualTo(3);
	}

	/** A close after a stream that cannot be waited for fails and leaves the buffer open, in the scope's books. */
	@Test
	void aCloseAfterAClosedStreamFailsAndLosesNothing() {
		GpuStream stream = this.backend.createStream();
		stream.close();
		try (MemoryScope scope = MemoryScope.open("stream", this.pool)) {
			ScopedBuffer buffer = scope.allocate(1024);
			assertThatIllegalStateException().isThrownBy(() -> buffer.closeAfter(stream));
			assertThat(buffer.isClosed()).isFalse();
			assertThat(scope.statistics().currentBytes()).isEqualTo(1024);
			assertThat(scope.statistics().openBuffers()).isEqualTo(1);
		}
		assertThat(this.pool.statistics().inUseBuffers()).isZero();
	}

	@Test
	void closingTheScopeReleasesEverythingAndASecondCloseIsHarmless() {
		MemoryScope scope = MemoryScope.open("matrix", this.pool);
		ScopedBuffer matrix = scope.allocate(float.class, 1024 * 1024);
		ScopedBuffer indices = scope.allocate(long.class, 65536);
		assertThat(this.pool.statistics().inUseBytes()).isGreaterThanOrEqualTo(4L * 1024 * 1024 + 8 * 65536);
		scope.close();
		scope.close();
		assertThat(matrix.isClosed()).isTrue();
		assertThat(indices.isClosed()).isTrue();
		assertThat(scope.statistics().currentBytes()).isZero();
		assertThat(scope.statistics().openBuffers()).isZero();
		assertThat(this.pool.statistics().inUseBuffers()).isZero();
		assertThat(this.pool.statistics().returns()).isEqualTo(2);
		assertThatIllegalStateException().isThrownBy(() -> matrix.copyFrom(new float[1]))
			.withMessageContaining("used after close");
		assertThatIllegalStateException().isThrownBy(() -> scope.allocate(16)).withMessageContaining("closed");
		assertThat(this.pool.statistics().inUseBuffers()).as("a refused allocation keeps nothing").isZero();
	}

	@Test
	void theBuilderWarmsThePoolForTheKnownWorkload() {
		int nodes = 100_000;
		try (MemoryScope scope = MemoryScope.builder("pagerank", this.pool)
			.expectedAllocations(3)
			.preallocate(4L * nodes)
			.preallocate(4L * nodes)
			.preallocate(8L * 300_000)
			.build()) {
			long missesAfterWarm = this.pool.statistics().misses();
			scope.allocate(float.class, nodes);
			scope.allocate(float.class, nodes);
			scope.allocate(long.class, 300_000);
			assertThat(this.pool.statistics().misses()).as("every allocation found its preallocation")
				.isEqualTo(missesAfterWarm);
			assertThat(scope.statistics().typedAllocations()).isEqualTo(3);
		}
	}

	@Test
	void badRequestsAreRefusedNamingTheValue() {
		try (MemoryScope scope = MemoryScope.open("bad", this.pool)) {
			assertThatIllegalArgumentException().isThrownBy(() -> scope.allocate(short.class, 4))
				.withMessageContaining("short");
			assertThatIllegalArgumentException().isThrownBy(() -> scope.allocate(int.class, 0))
				.withMessageContaining("0");
			assertThatIllegalArgumentException().isThrownBy(() -> scope.allocate(-5)).withMessageContaining("-5");
			assertThat(scope.statistics().allocations()).isZero();
		}
	}

}
