package io.gpumem.benchmarks;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import io.gpumem.host.HostBackend;
import io.gpumem.pool.diagnostics.MemoryEvent;
import io.gpumem.pool.diagnostics.PoolHistory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class TraceTest {

	private static final Trace SMALL = new Trace("small", "by hand", List.of(Trace.Event.acquire(0, 100, 0),
			Trace.Event.acquire(1, 50, 1), Trace.Event.close(0, 0), Trace.Event.acquire(2, 70, 0),
			Trace.Event.acquire(3, 10, 1), Trace.Event.close(1, 1)));

	/** {@link #SMALL} in the file format as its documentation (and {@code trace_replay.py}'s) states it, by hand. */
	private static final String SMALL_TEXT = """
			# gpumem trace 1
			# name small
			# source by hand
			a 0 100 0
			a 1 50 1
			c 0 0
			a 2 70 0
			a 3 10 1
			c 1 1
			""";

	@ParameterizedTest
	@ValueSource(strings = { "small.trace", "small.trace.gz" })
	void aTraceIsWrittenInTheStatedFormat(String name, @TempDir Path dir) throws IOException {
		Path file = dir.resolve(name);
		SMALL.write(file);
		byte[] written = Files.readAllBytes(file);
		assertThat(written[0] == (byte) 0x1f).as("gzip's first byte").isEqualTo(name.endsWith(".gz"));
		assertThat(new String(name.endsWith(".gz") ? gunzip(written) : written, StandardCharsets.UTF_8))
			.isEqualTo(SMALL_TEXT);
	}

	@ParameterizedTest
	@ValueSource(strings = { "small.trace", "small.trace.gz" })
	void aTraceInTheStatedFormatReadsBackWhole(String name, @TempDir Path dir) throws IOException {
		byte[] text = SMALL_TEXT.getBytes(StandardCharsets.UTF_8);
		Path file = Files.write(dir.resolve(name), name.endsWith(".gz") ? gzip(text) : text);
		assertThat(Trace.read(file)).isEqualTo(SMALL);
	}

	@Test
	void peakLentIsTheMostRequestedBytesOpenAtOnce() {
		assertThat(SMALL.acquires()).isEqualTo(4);
		assertThat(SMALL.peakLentBytes()).as("150 before the first close, 50 + 70 + 10 after").isEqualTo(150);
		assertThat(SMALL.workers()).isEqualTo(2);
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', quoteCharacter = '"', value = { "x 1 2 3|an event is 'a ID BYTES WORKER' or 'c ID WORKER'",
			"a 1 2|'a' takes 3 fields", "c 1|'c' takes 2 fields", "a 1 0 0|a request is of at least one byte",
			"a 1 2x 0|fields are whole numbers", "a -1 2 0|buffers and workers are numbered from 0" })
	void aMalformedLineIsRefusedWithItsNumberAndTheRule(String line, String rule, @TempDir Path dir)
			throws IOException {
		Path file = Files.writeString(dir.resolve("bad.trace"), Trace.HEADER + "\n# name bad\na 0 10 0\n" + line + "\n");
		assertThatIllegalArgumentException().isThrownBy(() -> Trace.read(file))
			.withMessage("trace " + file + " line 4 '" + line + "': " + rule);
	}

	@Test
	void aFileWithoutTheHeaderOrANameIsRefused(@TempDir Path dir) throws IOException {
		Path noHeader = Files.writeString(dir.resolve("a.trace"), "# name a\na 0 1 0\n");
		assertThatIllegalArgumentException().isThrownBy(() -> Trace.read(noHeader))
			.withMessageContaining("line 1 '# name a': the first line must be '" + Trace.HEADER + "'");
		Path noName = Files.writeString(dir.resolve("b.trace"), Trace.HEADER + "\na 0 1 0\n");
		assertThatIllegalArgumentException().isThrownBy(() -> Trace.read(noName))
			.withMessageContaining("a trace needs a '# name' line");
	}

	@Test
	void aBufferIsAcquiredOnceAndClosedOnceAfterItsAcquire() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new Trace("t", "", List.of(Trace.Event.acquire(0, 1, 0), Trace.Event.acquire(0, 1, 0))))
			.withMessage("trace 't' event 1 (a 0 1 0): buffer 0 was acquired twice");
		assertThatIllegalArgumentException().isThrownBy(() -> new Trace("t", "", List.of(Trace.Event.close(3, 0))))
			.withMessage("trace 't' event 0 (c 3 0): buffer 3 was never acquired");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new Trace("t", "", List.of(Trace.Event.acquire(0, 1, 0), Trace.Event.close(0, 0),
					Trace.Event.close(0, 1))))
			.withMessage("trace 't' event 2 (c 0 1): buffer 0 was closed twice");
	}

	@Test
	void theScheduleClosesEveryRequestOnTheWorkerThatAcquiredItAndIsTheSameForASeed() {
		Trace trace = Trace.schedule(RequestShape.SAMPLE, 16, 500, ServiceReplay.MEAN_PAUSE, 7);
		assertThat(Trace.schedule(RequestShape.SAMPLE, 16, 500, ServiceReplay.MEAN_PAUSE, 7)).isEqualTo(trace);
		assertThat(Trace.schedule(RequestShape.SAMPLE, 16, 500, ServiceReplay.MEAN_PAUSE, 8)).isNotEqualTo(trace);
		Map<Long, Integer> acquiredBy = new HashMap<>();
		Set<Long> closed = new HashSet<>();
		for (Trace.Event event : trace.events()) {
			if (event.acquire()) {
				acquiredBy.put(event.buffer(), event.worker());
			}
			else {
				assertThat(event.worker()).isEqualTo(acquiredBy.get(event.buffer()));
				closed.add(event.buffer());
			}
		}
		assertThat(closed).isEqualTo(acquiredBy.keySet());
		assertThat(trace.workers()).isEqualTo(16);
		assertThat(trace.name()).isEqualTo("service-sample-16");
	}

	@Test
	void aHistoryBecomesATraceWithAWorkerForEachThread() {
		PoolHistory history = new PoolHistory("device", true, List.of(event(0, MemoryEvent.Type.ACQUIRE, 4000, 1, "a"),
				event(1, MemoryEvent.Type.SEGMENT_ALLOCATED, 2 << 20, 0, "a"),
				event(2, MemoryEvent.Type.ACQUIRE, 8000, 2, "b"), event(3, MemoryEvent.Type.CLOSE, 4000, 1, "b"),
				event(4, MemoryEvent.Type.CLOSE, 8000, 2, "a")));
		Trace trace = Trace.fromHistory(history, "sample");
		assertThat(trace.events()).containsExactly(Trace.Event.acquire(1, 4000, 0), Trace.Event.acquire(2, 8000, 1),
				Trace.Event.close(1, 1), Trace.Event.close(2, 0));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> Trace.fromHistory(new PoolHistory("device", false, history.events()), "sample"))
			.withMessageContaining("dropped its first events");
	}

	@Test
	void aReplayRunsEachWorkersStepsOnItsOwnThreadAndClosesEveryBuffer() throws Exception {
		Trace trace = Trace.schedule(RequestShape.UNIFORM, 8, 300, ServiceReplay.MEAN_PAUSE, 1);
		Map<Object, Thread> lentTo = new ConcurrentHashMap<>();
		List<Thread> acquiredOn = new CopyOnWriteArrayList<>();
		AtomicLong held = new AtomicLong();
		AtomicLong peak = new AtomicLong();
		Lender recording = new Lender("recording") {

			@Override
			Object acquire(long bytes) {
				Object buffer = new long[] { bytes };
				assertThat(lentTo.put(buffer, Thread.currentThread())).as("lent twice").isNull();
				acquiredOn.add(Thread.currentThread());
				peak.accumulateAndGet(held.addAndGet(bytes), Math::max);
				return buffer;
			}

			@Override
			void write(Object buffer, byte[] payload) {
			}

			@Override
			void release(Object buffer) {
				assertThat(lentTo.remove(buffer)).as("released by the thread that acquired it")
					.isSameAs(Thread.currentThread());
				held.addAndGet(-((long[]) buffer)[0]);
			}

			@Override
			long heldBytes() {
				return held.get();
			}

			@Override
			long heldAfterTrim() {
				return held.get();
			}

			@Override
			public void close() {
			}

		};
		TraceReplay.Replayed replayed = TraceReplay.replay(trace, recording);
		assertThat(lentTo).isEmpty();
		assertThat(replayed.peakLent()).isEqualTo(trace.peakLentBytes()).isEqualTo(peak.get());
		assertThat(replayed.peakHeld()).isEqualTo(peak.get());
		assertThat(replayed.acquires()).isEqualTo(trace.acquires());
		Map<Integer, Set<Thread>> threadsOfWorker = new HashMap<>();
		List<Trace.Event> acquires = trace.events().stream().filter(Trace.Event::acquire).toList();
		for (int i = 0; i < acquires.size(); i++) {
			threadsOfWorker.computeIfAbsent(acquires.get(i).worker(), (w) -> new HashSet<>()).add(acquiredOn.get(i));
		}
		assertThat(threadsOfWorker.values()).as("one thread a worker").allSatisfy((threads) -> assertThat(threads)
			.hasSize(1));
		assertThat(threadsOfWorker.values().stream().flatMap(Set::stream).distinct()).as("a thread of its own")
			.hasSize(trace.workers());
	}

	@Test
	void aReplayOfGpumemOnTheHostBackendLendsWhatTheTraceAsksAndIsTheSameEachTime() throws Exception {
		Trace trace = Trace.schedule(RequestShape.UNIFORM, 16, 400, ServiceReplay.MEAN_PAUSE, 3);
		try (HostBackend backend = new HostBackend(1L << 30)) {
			TraceReplay.Replayed first = TraceReplay.replay(trace, Lender.create("gpumem", backend));
			TraceReplay.Replayed second = TraceReplay.replay(trace, Lender.create("gpumem", backend));
			assertThat(first.peakHeld()).isGreaterThanOrEqualTo(trace.peakLentBytes());
			assertThat(first.freshAllocations()).isPositive();
			assertThat(second).isEqualTo(first);
			assertThat(backend.memoryInfo().usedBytes()).as("every lender closed").isZero();
		}
	}

	private static MemoryEvent event(long sequence, MemoryEvent.Type type, long bytes, long buffer, String thread) {
		return new MemoryEvent(sequence, 0, type, bytes, bytes, buffer, 0, thread, null, List.of());
	}

	private static byte[] gzip(byte[] bytes) throws IOException {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		try (GZIPOutputStream gzip = new GZIPOutputStream(out)) {
			gzip.write(bytes);
		}
		return out.toByteArray();
	}

	private static byte[] gunzip(byte[] bytes) throws IOException {
		try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(bytes))) {
			return in.readAllBytes();
		}
	}

}
