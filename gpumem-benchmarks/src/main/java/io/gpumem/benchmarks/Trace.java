package io.gpumem.benchmarks;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Function;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

import io.gpumem.pool.diagnostics.MemoryEvent;
import io.gpumem.pool.diagnostics.PoolHistory;

/**
 * Every acquire and close of a run, in order, with its size and the worker that made it: the work any allocator
 * can replay step by step, gpumem's here ({@link TraceReplay}) and PyTorch's or CuPy's in Python, so that their
 * figures differ by the allocator alone.
 * <p>
 * As text (gzip-compressed where the file's name ends in {@code .gz}): a first line {@value #HEADER}, then
 * {@code # name NAME} and {@code # source TEXT}, then one event a line, {@code a ID BYTES WORKER} for an acquire
 * and {@code c ID WORKER} for a close. A buffer is acquired once and closed at most once, after its acquire;
 * buffers still open at the end count as lent to the end.
 *
 * @param name what the trace is called in reports
 * @param source what it was recorded from
 * @param events its events, in order
 */
record Trace(String name, String source, List<Event> events) {

	static final String HEADER = "# gpumem trace 1";

	Trace {
		events = List.copyOf(events);
		Set<Long> acquired = new HashSet<>();
		Set<Long> open = new HashSet<>();
		for (int i = 0; i < events.size(); i++) {
			Event event = events.get(i);
			String broken = event.acquire() ? (!acquired.add(event.buffer()) ? "acquired twice" : null)
					: !acquired.contains(event.buffer()) ? "never acquired"
					: !open.contains(event.buffer()) ? "closed twice" : null;
			if (broken != null) {
				throw new IllegalArgumentException("trace '" + name + "' event " + i + " (" + event.line()
						+ "): buffer " + event.buffer() + " was " + broken);
			}
			if (event.acquire()) {
				open.add(event.buffer());
			}
			else {
				open.remove(event.buffer());
			}
		}
	}

	/** The buffers acquired. */
	long acquires() {
		return this.events.stream().filter(Event::acquire).count();
	}

	/** The most requested bytes open at once. */
	long peakLentBytes() {
		Map<Long, Long> open = new HashMap<>();
		long lent = 0;
		long peak = 0;
		for (Event event : this.events) {
			if (event.acquire()) {
				open.put(event.buffer(), event.bytes());
				lent += event.bytes();
				peak = Math.max(peak, lent);
			}
			else {
				lent -= open.remove(event.buffer());
			}
		}
		return peak;
	}

	/** One more than the highest worker. */
	int workers() {
		return this.events.stream().mapToInt(Event::worker).max().orElse(-1) + 1;
	}

	/**
	 * The {@link ServiceWorkload}'s requests as {@link ServiceReplay} orders them: each of {@code workers} holds a
	 * request's buffers for an exponential time of mean 1 and starts its next request after one of mean
	 * {@code meanPause}, in an order drawn from {@code seed}.
	 */
	static Trace schedule(RequestShape shape, int workers, int requests, double meanPause, long seed) {
		SplittableRandom order = new SplittableRandom(seed);
		PriorityQueue<Step> steps = new PriorityQueue<>(Comparator.comparingDouble(Step::time));
		for (int w = 0; w < workers; w++) {
			steps.add(new Step(order.nextDouble(), w));
		}
		long[][] holding = new long[workers][];
		List<Event> events = new ArrayList<>();
		long nextBuffer = 0;
		for (int started = 0, done = 0; done < requests;) {
			Step step = steps.poll();
			int w = step.worker();
			if (holding[w] == null && started < requests) {
				long[] sizes = shape.sizes(new SplittableRandom(started++));
				holding[w] = new long[sizes.length];
				for (int i = 0; i < sizes.length; i++) {
					holding[w][i] = nextBuffer++;
					events.add(Event.acquire(holding[w][i], sizes[i], w));
				}
				steps.add(new Step(step.time() + exponential(order, 1), w));
			}
			else if (holding[w] != null) {
				for (long buffer : holding[w]) {
					events.add(Event.close(buffer, w));
				}
				holding[w] = null;
				done++;
				steps.add(new Step(step.time() + exponential(order, meanPause), w));
			}
		}
		return new Trace("service-" + shape.name + "-" + workers, String.format(Locale.ROOT,
				"ServiceReplay schedule: shape %s, %d workers, %d requests, seed %d", shape.name, workers, requests,
				seed), events);
	}

	/**
	 * The acquires and closes of a pool's history recorded with {@code gpumem.history.buffers: all}, a worker for
	 * each thread that acted, numbered as they first appear.
	 */
	static Trace fromHistory(PoolHistory history, String name) {
		if (!history.complete()) {
			throw new IllegalArgumentException("the history of pool '" + history.pool() + "' dropped its first events "
					+ "to make room: record it with a larger gpumem.history.events");
		}
		Map<String, Integer> workers = new LinkedHashMap<>();
		List<Event> events = new ArrayList<>();
		for (MemoryEvent event : history.events()) {
			if (event.type() == MemoryEvent.Type.ACQUIRE || event.type() == MemoryEvent.Type.CLOSE) {
				int worker = workers.computeIfAbsent(event.thread(), (thread) -> workers.size());
				events.add((event.type() == MemoryEvent.Type.ACQUIRE) ? Event.acquire(event.buffer(), event.bytes(), worker)
						: Event.close(event.buffer(), worker));
			}
		}
		return new Trace(name, "history of pool '" + history.pool() + "', " + workers.size() + " threads", events);
	}

	void write(Path file) throws IOException {
		try (OutputStream out = Files.newOutputStream(file); BufferedWriter writer = new BufferedWriter(
				new OutputStreamWriter(file.toString().endsWith(".gz") ? new GZIPOutputStream(out) : out,
						StandardCharsets.UTF_8))) {
			writer.write(HEADER + "\n# name " + this.name + "\n# source " + this.source + "\n");
			for (Event event : this.events) {
				writer.write(event.line());
				writer.write('\n');
			}
		}
	}

	static Trace read(Path file) throws IOException {
		try (InputStream in = Files.newInputStream(file); BufferedReader reader = new BufferedReader(
				new InputStreamReader(file.toString().endsWith(".gz") ? new GZIPInputStream(in) : in,
						StandardCharsets.UTF_8))) {
			String name = null;
			String source = "";
			List<Event> events = new ArrayList<>();
			int number = 0;
			for (String line = reader.readLine(); line != null; line = reader.readLine()) {
				number++;
				if (number == 1 && !line.equals(HEADER)) {
					throw malformed(file, number, line, "the first line must be '" + HEADER + "'");
				}
				if (line.startsWith("# name ")) {
					name = line.substring("# name ".length()).strip();
				}
				else if (line.startsWith("# source ")) {
					source = line.substring("# source ".length()).strip();
				}
				else if (!line.isBlank() && !line.startsWith("#")) {
					int at = number;
					String event = line;
					events.add(Event.parse(line, (rule) -> malformed(file, at, event, rule)));
				}
			}
			if (name == null) {
				throw malformed(file, number, "", "a trace needs a '# name' line");
			}
			return new Trace(name, source, events);
		}
	}

	private static IllegalArgumentException malformed(Path file, int number, String line, String rule) {
		return new IllegalArgumentException("trace " + file + " line " + number + " '" + line + "': " + rule);
	}

	private static double exponential(SplittableRandom random, double mean) {
		return -mean * Math.log(1 - random.nextDouble());
	}

	/** A worker's next step, at a time in units of a mean hold. */
	private record Step(double time, int worker) {
	}

	/**
	 * One acquire or close.
	 *
	 * @param acquire whether the buffer was acquired, or else closed
	 * @param buffer the buffer's number
	 * @param bytes the bytes requested; 0 for a close
	 * @param worker the worker that acted
	 */
	record Event(boolean acquire, long buffer, long bytes, int worker) {

		static Event acquire(long buffer, long bytes, int worker) {
			if (bytes <= 0) {
				throw new IllegalArgumentException("buffer " + buffer + " requests " + bytes + " bytes: a request "
						+ "is of at least one byte");
			}
			return new Event(true, buffer, bytes, worker);
		}

		static Event close(long buffer, int worker) {
			return new Event(false, buffer, 0, worker);
		}

		String line() {
			return this.acquire ? "a " + this.buffer + " " + this.bytes + " " + this.worker
					: "c " + this.buffer + " " + this.worker;
		}

		static Event parse(String line, Function<String, IllegalArgumentException> malformed) {
			String[] fields = line.strip().split("\\s+");
			int expected = switch (fields[0]) {
				case "a" -> 4;
				case "c" -> 3;
				default -> throw malformed.apply("an event is 'a ID BYTES WORKER' or 'c ID WORKER'");
			};
			if (fields.length != expected) {
				throw malformed.apply("'" + fields[0] + "' takes " + (expected - 1) + " fields");
			}
			try {
				long buffer = Long.parseLong(fields[1]);
				int worker = Integer.parseInt(fields[expected - 1]);
				if (buffer < 0 || worker < 0) {
					throw malformed.apply("buffers and workers are numbered from 0");
				}
				if (expected == 3) {
					return close(buffer, worker);
				}
				long bytes = Long.parseLong(fields[2]);
				if (bytes <= 0) {
					throw malformed.apply("a request is of at least one byte");
				}
				return acquire(buffer, bytes, worker);
			}
			catch (NumberFormatException ex) {
				throw malformed.apply("fields are whole numbers");
			}
		}

	}

}
