package io.gpumem.pool;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.allocator.StatisticsAllocator;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryKind;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/** A pool's shelf: buffers set aside by key, counted as the pool's cached memory, until taken, trimmed or closed. */
class BufferShelfTest {

	private final HostBackend backend = new HostBackend(64L << 20);

	private final StatisticsAllocator allocator = new StatisticsAllocator(this.backend.allocator(MemoryKind.DEVICE));

	private final StratifiedMemoryPool pool = new StratifiedMemoryPool(this.allocator,
			PoolConfig.builder("shelved").sizeClasses(1024, 4096).build());

	@AfterEach
	void close() {
		this.pool.close();
		assertThat(this.allocator.statistics().currentBytes()).as("everything given back").isZero();
		this.backend.close();
	}

	@Test
	void aKeyKeepsAtMostItsCountAndLendsTheMostRecentFirst() {
		BufferShelf shelf = this.pool.shelf(2);
		PooledBuffer first = this.pool.acquire(1000);
		PooledBuffer second = this.pool.acquire(1000);
		PooledBuffer third = this.pool.acquire(1000);
		first.fill((byte) 1);
		second.fill((byte) 2);
		assertThat(shelf.put("a", first)).isTrue();
		assertThat(shelf.put("a", second)).isTrue();
		assertThat(shelf.put("a", third)).as("beyond two a key, closed as any other").isFalse();
		assertThat(first.isClosed() && second.isClosed() && third.isClosed()).isTrue();
		assertThat(shelf.count("a")).isEqualTo(2);
		assertThat(shelf.cachedBytes("a")).isEqualTo(2048).isEqualTo(shelf.cachedBytes());
		assertThat(shelf.take("b")).isNull();
		try (PooledBuffer again = shelf.take("a")) {
			byte[] content = new byte[1000];
			again.copyTo(content);
			assertThat(again.size()).isEqualTo(1000);
			assertThat(content).as("the second buffer's memory, set aside last").containsOnly((byte) 2);
		}
		PoolStatistics statistics = this.pool.statistics();
		assertThat(statistics.requests()).isEqualTo(4);
		assertThat(statistics.returns()).isEqualTo(4);
		assertThat(shelf.count("a")).isEqualTo(1);
	}

	@Test
	void aClosedShelfGivesItsBuffersBackAndSetsNothingAsideAnyMore() {
		BufferShelf shelf = this.pool.shelf(4);
		shelf.put("a", this.pool.acquire(4096));
		shelf.close();
		assertThat(shelf.cachedBytes()).isZero();
		PooledBuffer buffer = this.pool.acquire(4096);
		assertThat(shelf.put("a", buffer)).isFalse();
		assertThat(buffer.isClosed()).isTrue();
		assertThat(this.pool.statistics().cachedBuffers()).as("closed into the pool's free lists").isEqualTo(1);
		assertThat(shelf.take("a")).isNull();
	}

	@Test
	void aClosedPoolMakesNoShelfAndAnotherPoolsBufferIsRefusedUntouched() {
		StratifiedMemoryPool other = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE),
				PoolConfig.builder("other").build());
		BufferShelf shelf = this.pool.shelf(1);
		try (PooledBuffer foreign = other.acquire(1024)) {
			assertThatIllegalArgumentException().isThrownBy(() -> shelf.put("a", foreign))
				.withMessageContaining("not a buffer of pool 'shelved'");
			assertThat(foreign.isClosed()).isFalse();
		}
		other.close();
		assertThatIllegalArgumentException().isThrownBy(() -> this.pool.shelf(-1)).withMessageContaining("-1");
		this.pool.close();
		assertThatIllegalStateException().isThrownBy(() -> this.pool.shelf(1)).withMessageContaining("closed");
	}

}
