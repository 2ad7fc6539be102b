package io.gpumem.pool;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryHolder;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.MemoryEvent.Type;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Where recorded buffers were acquired: by default the frames of every buffer of 16 MiB or more, and of a smaller one
 * with the odds of its bytes to 16 MiB, counted among the holders for all it stands for; every one's where every
 * buffer records its frames.
 */
class AcquireSitesTest {

	private static final long MIB = 1L << 20;

	private final HostBackend backend = new HostBackend(64 * MIB);

	/** The numbers the sites draw, in turn: a buffer keeps its frames where the draw is below its bytes. */
	private final Queue<Long> draws = new ArrayDeque<>();

	private final List<Long> bounds = new ArrayList<>();

	@AfterEach
	void close() {
		this.backend.close();
	}

	@Test
	void aBufferBelowSixteenMebibytesKeepsItsFramesWithTheOddsOfItsBytesAndStandsForSixteenMebibytes() {
		AcquireSites sites = sites(BufferRecording.LARGE);
		this.draws.addAll(List.of(0L, MIB, 5 * MIB, MIB - 1));
		List<Block> blocks = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			blocks.add(lend(sites, MIB));
		}
		assertThat(this.bounds).as("each drawn below 16 MiB").containsOnly(16 * MIB);
		assertThat(blocks).extracting((block) -> block.lend.weight).containsExactly(16.0, 0.0, 0.0, 16.0);
		assertThat(sites.top(3)).singleElement().satisfies((holder) -> {
			assertThat(holder).extracting(MemoryHolder::bytes, MemoryHolder::buffers, MemoryHolder::sampled)
				.containsExactly(32 * MIB, 32L, true);
			assertThat(holder.frames().get(0)).startsWith(getClass().getName() + ".lend(");
			assertThat(holder.describe()).startsWith("about 32.00 MiB in about 32 buffers acquired at ");
		});
		assertThat(sites.history().read().events()).filteredOn((event) -> event.type() == Type.ACQUIRE)
			.as("every recorded buffer's acquire, with frames where kept")
			.extracting((event) -> event.frames().isEmpty())
			.containsExactly(false, true, true, false);
		blocks.forEach(Block::unwatch);
		assertThat(sites.top(3)).as("returned buffers hold nothing").isEmpty();
	}

	@Test
	void aBufferOfSixteenMebibytesOrMoreAlwaysKeepsItsFramesAndCountsOnce() {
		AcquireSites sites = sites(BufferRecording.LARGE);
		Block block = lend(sites, 16 * MIB);
		assertThat(this.bounds).as("nothing drawn").isEmpty();
		assertThat(sites.top(3)).singleElement()
			.extracting(MemoryHolder::bytes, MemoryHolder::buffers, MemoryHolder::sampled)
			.containsExactly(16 * MIB, 1L, false);
		assertThat(sites.top(3).get(0).describe()).startsWith("16.00 MiB in 1 buffer acquired at ");
		block.unwatch();
	}

	@Test
	void everyBufferKeepsItsFramesWhereEveryBufferIsRecorded() {
		AcquireSites sites = sites(BufferRecording.ALL);
		for (int i = 0; i < 2; i++) {
			lend(sites, 4096);
		}
		assertThat(this.bounds).isEmpty();
		assertThat(sites.top(3)).singleElement()
			.extracting(MemoryHolder::bytes, MemoryHolder::buffers, MemoryHolder::sampled)
			.containsExactly(8192L, 2L, false);
	}

	private AcquireSites sites(BufferRecording recording) {
		return new AcquireSites(new MemoryHistory("sites", new HistoryConfig(recording, 100)), (bound) -> {
			this.bounds.add(bound);
			return this.draws.remove();
		});
	}

	private Block lend(AcquireSites sites, long bytes) {
		Block block = new Block(this.backend.allocator(MemoryKind.DEVICE).allocate(bytes), 0, null);
		sites.lent(block, bytes, sites.history().begin(bytes));
		return block;
	}

}
