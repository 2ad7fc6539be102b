package io.gpumem.pool;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;
import io.gpumem.stream.GpuStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * A pool's memory map: every segment with its blocks in address order, lent, closed after stream work, cached
 * or free, adding up to the segments and to the pool's reserved bytes; on the host backend and the fake driver.
 */
class PoolSnapshotTest {

	private static final long MIB = 1L << 20;

	private final Opened opened = new Opened();

	private final long started = System.nanoTime();

	@AfterEach
	void close() throws Exception {
		this.opened.close();
	}

	@Test
	void onTheHostBackendTheMapAddsUpAndNamesWhatEveryBlockDoes() {
		HostBackend backend = open(new HostBackend(256 * MIB));
		StratifiedMemoryPool pool = pool(backend.allocator(MemoryKind.DEVICE));
		List<PooledBuffer> lent = lendEveryKind(pool);
		ManualStream stream = new ManualStream();
		pool.acquire(512 << 10).closeAfter(stream);
		checkMap(pool, EnumSet.allOf(PoolSnapshot.State.class), stream);
		stream.finish();
		lent.forEach(PooledBuffer::close);
		pool.trim(0);
		assertThat(pool.snapshot().orElseThrow().segments()).as("all given back").isEmpty();
	}

	@Test
	void onTheFakeDriverTheMapAddsUpToo() {
		CudaBackend backend = open(CudaBackend.open(new FakeCudaDriver(256 * MIB), 0));
		StratifiedMemoryPool pool = pool(backend.allocator(MemoryKind.DEVICE));
		List<PooledBuffer> lent = lendEveryKind(pool);
		GpuStream stream = open(backend.createStream());
		PooledBuffer busy = pool.acquire(512 << 10);
		stream.fill(busy, 0, 512 << 10, (byte) 1);
		busy.closeAfter(stream);
		checkMap(pool, EnumSet.allOf(PoolSnapshot.State.class), stream);
		lent.forEach(PooledBuffer::close);
	}

	/**
	 * Lends a small buffer, a recorded one large enough to keep its frames always, and one above the top class, caches
	 * some and frees some.
	 */
	private List<PooledBuffer> lendEveryKind(StratifiedMemoryPool pool) {
		pool.warm(64 << 10, 4);
		pool.acquire(2 * MIB).close();
		BufferShelf shelf = pool.shelf(4);
		shelf.put("key", pool.acquire(256 << 10));
		return new ArrayList<>(List.of(pool.acquire(4096), pool.acquire(16 * MIB), pool.acquire(65 * MIB)));
	}

	private void checkMap(StratifiedMemoryPool pool, Set<PoolSnapshot.State> states, GpuStream stream) {
		PoolSnapshot snapshot = pool.snapshot().orElseThrow();
		long sinceStart = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - this.started);
		assertThat(snapshot.pool()).isEqualTo("mapped");
		assertThat(snapshot.segments().stream().mapToLong(PoolSnapshot.SegmentView::bytes).sum())
			.isEqualTo(snapshot.reservedBytes())
			.isEqualTo(pool.reservedBytes());
		for (PoolSnapshot.SegmentView segment : snapshot.segments()) {
			long offset = 0;
			for (PoolSnapshot.BlockView block : segment.blocks()) {
				assertThat(block.offset()).as("in address order, without gaps").isEqualTo(offset);
				offset += block.bytes();
			}
			assertThat(offset).as("a segment's blocks fill it").isEqualTo(segment.bytes());
		}
		List<PoolSnapshot.BlockView> blocks = snapshot.segments()
			.stream()
			.flatMap((segment) -> segment.blocks().stream())
			.toList();
		assertThat(blocks).extracting(PoolSnapshot.BlockView::state).containsAll(states);
		assertThat(blocks).filteredOn((block) -> block.state() == PoolSnapshot.State.LENT && block.bytes() == 16 * MIB)
			.singleElement()
			.satisfies((block) -> assertThat(block.acquiredAt().get(0))
				.startsWith(PoolSnapshotTest.class.getName() + ".lendEveryKind("));
		assertThat(blocks).filteredOn((block) -> block.state() == PoolSnapshot.State.LENT && block.bytes() == 4096)
			.singleElement()
			.satisfies((block) -> {
				assertThat(block.acquiredAt()).as("small buffers record no frames").isEmpty();
				assertThat(block.ageMillis()).as("nor when they were acquired").isEqualTo(-1);
			});
		assertThat(blocks).filteredOn((block) -> block.state() == PoolSnapshot.State.LENT && block.bytes() == 16 * MIB)
			.extracting(PoolSnapshot.BlockView::ageMillis)
			.allSatisfy((age) -> assertThat(age).as("acquired in this test").isBetween(0L, sinceStart));
		assertThat(blocks).filteredOn((block) -> block.state() == PoolSnapshot.State.CACHED)
			.extracting(PoolSnapshot.BlockView::ageMillis)
			.allSatisfy((age) -> assertThat(age).as("cached in this test, to the clock's second")
				.isBetween(0L, sinceStart + 1000));
		assertThat(blocks).filteredOn((block) -> block.state() == PoolSnapshot.State.PENDING)
			.singleElement()
			.satisfies((block) -> assertThat(block.stream()).as("the stream it waits on").isEqualTo(stream.toString()));
		assertThat(blocks).filteredOn((block) -> block.state() == PoolSnapshot.State.FREE)
			.extracting(PoolSnapshot.BlockView::ageMillis, PoolSnapshot.BlockView::stream)
			.containsOnly(tuple(-1L, null));
		assertThat(blocks).filteredOn((block) -> block.bytes() == 65 * MIB)
			.extracting(PoolSnapshot.BlockView::state)
			.containsExactly(PoolSnapshot.State.LENT);
	}

	private StratifiedMemoryPool pool(MemoryAllocator allocator) {
		return open(new StratifiedMemoryPool(allocator, PoolConfig.builder("mapped").build()));
	}

	private <T extends AutoCloseable> T open(T closeable) {
		return this.opened.add(closeable);
	}

}
