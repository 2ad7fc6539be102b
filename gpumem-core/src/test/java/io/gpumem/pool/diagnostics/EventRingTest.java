package io.gpumem.pool.diagnostics;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A stripe's ring of events: a claim from a stale hint never takes a sequence claimed already, a slot a writer still
 * writes a lap late is passed over and no writer waits, and a reader never sees an event half written, however many
 * threads write at once.
 */
class EventRingTest {

	@Test
	void aClaimFromAStaleHintTakesTheFirstSequenceNoOneClaimed() {
		EventRing ring = new EventRing(4);
		for (long sequence = 0; sequence < 6; sequence++) {
			assertThat(ring.claim(sequence)).isEqualTo(sequence);
			put(ring, sequence);
		}
		assertThat(ring.claim(1)).as("a lap behind: past the newer events of its slots").isEqualTo(6);
		assertThat(ring.claim(6)).as("6 is being written").isEqualTo(7);
	}

	@Test
	void passesOverASlotALateWriterStillWrites() {
		EventRing ring = new EventRing(4);
		long late = ring.claim(0);
		for (long sequence = 1; sequence < 4; sequence++) {
			put(ring, ring.claim(sequence));
		}
		assertThat(ring.claim(4)).as("slot 0 is still written with event 0").isEqualTo(5);
		put(ring, 5);
		put(ring, late);
		List<EventRing.Held> held = new ArrayList<>();
		EventRing.Lap lap = ring.read(0, held);
		assertThat(lap.count()).isEqualTo(6);
		assertThat(held).extracting(EventRing.Held::sequence)
			.as("the last lap, without the late event nor the sequence passed over")
			.containsExactlyInAnyOrder(2L, 3L, 5L);
		assertThat(lap.from()).as("lapped: it holds every event from its oldest's time").isEqualTo(2L);
	}

	@Test
	void keepsNoEventWhereAWholeLapIsStillWritten() {
		EventRing ring = new EventRing(4);
		for (long sequence = 0; sequence < 4; sequence++) {
			assertThat(ring.claim(sequence)).isEqualTo(sequence);
		}
		assertThat(ring.claim(4)).as("every slot claimed, none written").isEqualTo(-1);
		put(ring, 2);
		assertThat(ring.claim(4)).as("the slot of 2 is free again, a lap on").isEqualTo(6);
	}

	@Test
	void keepsTheLastLapOnly() {
		EventRing ring = new EventRing(4);
		for (long sequence = 0; sequence < 7; sequence++) {
			put(ring, ring.claim(sequence));
		}
		List<EventRing.Held> held = new ArrayList<>();
		EventRing.Lap lap = ring.read(0, held);
		assertThat(lap.count()).isEqualTo(7);
		assertThat(held).extracting(EventRing.Held::sequence).containsExactlyInAnyOrder(3L, 4L, 5L, 6L);
	}

	@Test
	void everyWriterClaimsItsOwnSequenceAndAReaderSeesEveryEventWhole() throws InterruptedException {
		EventRing ring = new EventRing(64);
		AtomicLong hint = new AtomicLong();
		AtomicBoolean stop = new AtomicBoolean();
		List<List<Long>> claimed = new ArrayList<>();
		List<Thread> writers = new ArrayList<>();
		for (int t = 0; t < 4; t++) {
			List<Long> own = new ArrayList<>();
			claimed.add(own);
			Thread writer = new Thread(() -> {
				while (!stop.get()) {
					long sequence = ring.claim(hint.getPlain());
					if (sequence >= 0) {
						hint.setRelease(sequence + 1);
						own.add(sequence);
						put(ring, sequence);
					}
				}
			});
			writers.add(writer);
			writer.start();
		}
		try {
			for (int read = 0; read < 2000; read++) {
				List<EventRing.Held> held = new ArrayList<>();
				ring.read(0, held);
				for (EventRing.Held event : held) {
					long sequence = event.sequence();
					assertThat(List.of(event.nanos(), event.bytes(), event.blockBytes(), event.buffer(),
							event.reservedBytes()))
						.as("read %d: the fields of one event, %d", read, sequence)
						.containsExactly(sequence, 2 * sequence, 3 * sequence, 4 * sequence, 5 * sequence);
				}
			}
		}
		finally {
			stop.set(true);
			for (Thread writer : writers) {
				writer.join();
			}
		}
		Set<Long> distinct = new HashSet<>();
		long total = 0;
		for (List<Long> own : claimed) {
			distinct.addAll(own);
			total += own.size();
		}
		assertThat(distinct).as("no sequence claimed twice").hasSize((int) total);
	}

	private static void put(EventRing ring, long sequence) {
		ring.put(sequence, MemoryEvent.Type.ACQUIRE, sequence, 2 * sequence, 3 * sequence, 4 * sequence,
				5 * sequence, null, null);
	}

}
