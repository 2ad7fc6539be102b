package io.gpumem.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

import tools.jackson.databind.json.JsonMapper;

import io.gpumem.backend.GpuBackend;
import io.gpumem.pool.diagnostics.PoolHistory;

/**
 * Records {@link Trace}s and replays them against gpumem's lenders, one step at a time, each worker's steps on a
 * thread of its own, so that a lender's peak reserved bytes depend on the trace alone.
 * <pre>{@code
 * java -cp benchmarks.jar io.gpumem.benchmarks.TraceReplay schedule --shapes uniform,sample --workers 64,200 \
 *     --requests 20000 --dir traces
 * java -cp benchmarks.jar io.gpumem.benchmarks.TraceReplay history HISTORY.json NAME OUT.trace
 * java -cp benchmarks.jar io.gpumem.benchmarks.TraceReplay replay --backend cuda --lenders gpumem,gpumem-fixed \
 *     --out replays.jsonl traces/*.trace
 * }</pre>
 * {@code replay} appends one JSON record a line per trace and lender, in the shape the Python replay of the same
 * traces writes: {@code trace}, {@code allocator}, {@code acquires}, {@code peakLentBytes},
 * {@code peakReservedBytes}, {@code reservedPerLent}, {@code driverAllocations} and {@code seconds}.
 */
public final class TraceReplay {

	/** gpumem's loggers, kept from the console so that each replayed pool's start is not logged. */
	private static final Logger QUIET = Logger.getLogger("io.gpumem");

	private TraceReplay() {
	}

	public static void main(String[] args) throws Exception {
		try {
			run(args);
		}
		catch (IllegalArgumentException ex) {
			System.err.println(ex.getMessage());
			System.exit(2);
		}
	}

	/**
	 * Runs one command, as {@link #main} does, but throws where {@code main} exits.
	 * @throws IllegalArgumentException for bad arguments or a malformed trace
	 */
	public static void run(String[] args) throws Exception {
		String usage = "usage: TraceReplay schedule --shapes S,.. --workers N,.. --requests N --dir DIR"
				+ " | history HISTORY.json NAME OUT | replay --backend B --lenders L,.. --out FILE TRACE...";
		if (args.length == 0) {
			throw new IllegalArgumentException(usage);
		}
		List<String> rest = List.of(args).subList(1, args.length);
		switch (args[0]) {
			case "schedule" -> {
				Map<String, String> options = Arguments.parse(rest, Map.of("--shapes", "uniform", "--workers", "64",
						"--requests", "20000", "--dir", "."));
				Path dir = Files.createDirectories(Path.of(options.get("--dir")));
				for (String shape : options.get("--shapes").split(",")) {
					for (String workers : options.get("--workers").split(",")) {
						Trace trace = Trace.schedule(RequestShape.named(shape), Integer.parseInt(workers),
								Integer.parseInt(options.get("--requests")), ServiceReplay.MEAN_PAUSE, 0);
						trace.write(dir.resolve(trace.name() + ".trace"));
						System.out.printf(Locale.ROOT, "%s: %d acquires, peak lent %d bytes%n", trace.name(),
								trace.acquires(), trace.peakLentBytes());
					}
				}
			}
			case "history" -> {
				if (rest.size() != 3) {
					throw new IllegalArgumentException(usage);
				}
				PoolHistory history = JsonMapper.shared().readValue(Path.of(rest.get(0)).toFile(), PoolHistory.class);
				Trace.fromHistory(history, rest.get(1)).write(Path.of(rest.get(2)));
			}
			case "replay" -> {
				int firstTrace = 0;
				while (firstTrace < rest.size() && rest.get(firstTrace).startsWith("--")) {
					firstTrace += 2;
				}
				firstTrace = Math.min(firstTrace, rest.size());
				Map<String, String> options = Arguments.parse(rest.subList(0, firstTrace), Map.of("--backend", "host",
						"--lenders", "gpumem", "--out", "replays.jsonl"));
				replayAll(rest.subList(firstTrace, rest.size()).stream().map(Path::of).toList(), options.get("--backend"),
						List.of(options.get("--lenders").split(",")), Path.of(options.get("--out")));
			}
			default -> throw new IllegalArgumentException(usage);
		}
	}

	private static void replayAll(List<Path> traces, String backendType, List<String> lenders, Path out)
			throws Exception {
		if (traces.isEmpty()) {
			throw new IllegalArgumentException("replay needs at least one trace");
		}
		QUIET.setLevel(Level.WARNING);
		try (GpuBackend backend = ServiceWorkload.backend(backendType)) {
			for (Path file : traces) {
				Trace trace = Trace.read(file);
				for (String name : lenders) {
					long start = System.nanoTime();
					Replayed replayed = replay(trace, Lender.create(name, backend));
					Map<String, Object> record = new LinkedHashMap<>();
					record.put("trace", trace.name());
					record.put("allocator", name);
					record.put("acquires", replayed.acquires());
					record.put("peakLentBytes", replayed.peakLent());
					record.put("peakReservedBytes", replayed.peakHeld());
					record.put("reservedPerLent", Math.round(replayed.heldPerLent() * 1000) / 1000.0);
					record.put("driverAllocations", replayed.freshAllocations());
					record.put("seconds", Math.round((System.nanoTime() - start) / 1e6) / 1000.0);
					String line = JsonMapper.shared().writeValueAsString(record);
					Files.writeString(out, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
					System.out.println(line);
				}
			}
		}
	}

	/**
	 * Replays {@code trace} against {@code lender}, each worker's events on a thread of its own and one step at a
	 * time, and closes the lender. A step is a run of consecutive events of one worker; the next starts once it
	 * ended, so the map of open buffers passes from thread to thread with the steps.
	 */
	static Replayed replay(Trace trace, Lender lender) throws InterruptedException, ExecutionException {
		ExecutorService[] threads = new ExecutorService[trace.workers()];
		Arrays.setAll(threads, (w) -> Executors.newSingleThreadExecutor());
		try (lender) {
			Map<Long, Object> open = new HashMap<>();
			byte[] payload = new byte[64];
			long peakHeld = 0;
			List<Trace.Event> events = trace.events();
			for (int from = 0; from < events.size();) {
				int worker = events.get(from).worker();
				int to = from;
				while (to < events.size() && events.get(to).worker() == worker) {
					to++;
				}
				List<Trace.Event> step = events.subList(from, to);
				threads[worker].submit(() -> {
					for (Trace.Event event : step) {
						if (event.acquire()) {
							Object buffer = lender.acquire(event.bytes());
							lender.write(buffer, payload);
							open.put(event.buffer(), buffer);
						}
						else {
							lender.release(open.remove(event.buffer()));
						}
					}
				}).get();
				peakHeld = Math.max(peakHeld, lender.heldBytes());
				from = to;
			}
			return new Replayed(Math.max(peakHeld, lender.peakHeldBytes()), trace.peakLentBytes(),
					lender.freshAllocations(), trace.acquires());
		}
		finally {
			for (ExecutorService thread : threads) {
				thread.shutdown();
				thread.awaitTermination(10, TimeUnit.SECONDS);
			}
		}
	}

	/** What one replay measured. */
	record Replayed(long peakHeld, long peakLent, long freshAllocations, long acquires) {

		double heldPerLent() {
			return (double) this.peakHeld / this.peakLent;
		}

	}

}
