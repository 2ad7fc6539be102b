package io.gpumem.pool.diagnostics;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A stripe's ring of events: a writer late by a lap never replaces a newer event, and a reader never sees an event
 * half written, however many threads write at once.
 */
class EventRingTest {

	@Test
	void aWriterLateByALapNeverReplacesANewerEvent() {
		EventRing ring = new EventRing(4);
		put(ring, 5);
		put(ring, 1);
		List<EventRing.Held> held = new ArrayList<>();
		long from = ring.read(0, 6, held);
		assertThat(held).extracting(EventRing.Held::sequence).containsExactly(5L);
		assertThat(from).as("lapped: it holds every event from its oldest's time").isEqualTo(5L);
	}

	@Test
	void keepsTheLastLapOnly() {
		EventRing ring = new EventRing(4);
		for (long sequence = 0; sequence < 7; sequence++) {
			put(ring, sequence);
		}
		List<EventRing.Held> held = new ArrayList<>();
		ring.read(0, 7, held);
		assertThat(held).extracting(EventRing.Held::sequence).containsExactlyInAnyOrder(3L, 4L, 5L, 6L);
	}

	@Test
	void aReaderSeesEveryEventWholeWhileThreadsWrite() throws InterruptedException {
		EventRing ring = new EventRing(64);
		AtomicLong next = new AtomicLong();
		AtomicBoolean stop = new AtomicBoolean();
		List<Thread> writers = new ArrayList<>();
		for (int t = 0; t < 4; t++) {
			Thread writer = new Thread(() -> {
				while (!stop.get()) {
					put(ring, next.getAndIncrement());
				}
			});
			writers.add(writer);
			writer.start();
		}
		try {
			for (int read = 0; read < 2000; read++) {
				List<EventRing.Held> held = new ArrayList<>();
				ring.read(0, next.get(), held);
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
	}

	private static void put(EventRing ring, long sequence) {
		ring.put(sequence, MemoryEvent.Type.ACQUIRE, sequence, 2 * sequence, 3 * sequence, 4 * sequence,
				5 * sequence, null, null);
	}

}
