package io.gpumem.pool.diagnostics;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;

import org.junit.jupiter.api.Test;

import io.gpumem.memory.MemoryHolder;
import io.gpumem.pool.diagnostics.MemoryEvent.Type;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Where recorded buffers were acquired: by default, on a device of 64 MiB, the frames of every buffer of 16 MiB or
 * more, and of a smaller one with the odds of its bytes to 16 MiB, counted among the holders for all it stands for;
 * every one's where every buffer records its frames.
 */
class AcquireSitesTest {

	private static final long MIB = 1L << 20;

	private MemoryHistory history;

	/** The numbers the sites draw, in turn: a buffer keeps its frames where the draw is below its bytes. */
	private final Queue<Long> draws = new ArrayDeque<>();

	private final List<Long> bounds = new ArrayList<>();

	@Test
	void aBufferBelowSixteenMebibytesKeepsItsFramesWithTheOddsOfItsBytesAndStandsForSixteenMebibytes() {
		AcquireSites sites = sites(BufferRecording.LARGE);
		this.draws.addAll(List.of(0L, MIB, 5 * MIB, MIB - 1));
		List<AcquireSites.Lend> lends = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			lends.add(lend(sites, MIB));
		}
		assertThat(this.bounds).as("each drawn below 16 MiB").containsOnly(16 * MIB);
		assertThat(lends).extracting((lend) -> lend.weight).containsExactly(16.0, 0.0, 0.0, 16.0);
		assertThat(sites.top(3)).singleElement().satisfies((holder) -> {
			assertThat(holder).extracting(MemoryHolder::bytes, MemoryHolder::buffers, MemoryHolder::sampled)
				.containsExactly(32 * MIB, 32L, true);
			assertThat(holder.frames().get(0)).startsWith(getClass().getName() + ".lend(");
			assertThat(holder.describe()).startsWith("about 32.00 MiB in about 32 buffers acquired at ");
		});
		assertThat(this.history.read().events()).filteredOn((event) -> event.type() == Type.ACQUIRE)
			.as("every recorded buffer's acquire, with frames where kept")
			.extracting((event) -> event.frames().isEmpty())
			.containsExactly(false, true, true, false);
		lends.forEach(AcquireSites.Lend::returned);
		assertThat(sites.top(3)).as("returned buffers hold nothing").isEmpty();
	}

	@Test
	void aBufferOfSixteenMebibytesOrMoreAlwaysKeepsItsFramesAndCountsOnce() {
		AcquireSites sites = sites(BufferRecording.LARGE);
		AcquireSites.Lend lend = lend(sites, 16 * MIB);
		assertThat(this.bounds).as("nothing drawn").isEmpty();
		assertThat(sites.top(3)).singleElement()
			.extracting(MemoryHolder::bytes, MemoryHolder::buffers, MemoryHolder::sampled)
			.containsExactly(16 * MIB, 1L, false);
		assertThat(sites.top(3).get(0).describe()).startsWith("16.00 MiB in 1 buffer acquired at ");
		lend.returned();
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
		MemoryHistory history = new MemoryHistory("sites", new HistoryConfig(recording, 100), () -> 0, 64 * MIB, 1,
				() -> 0);
		this.history = history;
		return new AcquireSites(history, recording.framesEveryBytes(64 * MIB), (bound) -> {
			this.bounds.add(bound);
			return this.draws.remove();
		});
	}

	private AcquireSites.Lend lend(AcquireSites sites, long bytes) {
		return sites.lent(new Object(), bytes, bytes, this.history.acquiring(bytes), 0);
	}

}
