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
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
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
		catch (CommandLine.ParameterException ex) {
			System.err.println(ex.getMessage());
			ex.getCommandLine().usage(System.err);
			System.exit(2);
		}
		catch (IllegalArgumentException ex) {
			System.err.println(ex.getMessage());
			System.exit(2);
		}
	}

	/**
	 * Runs one command, as {@link #main} does, but throws where {@code main} exits.
	 * @throws CommandLine.ParameterException for arguments the command cannot take
	 * @throws IllegalArgumentException for a malformed trace or an unknown lender
	 */
	public static void run(String[] args) throws Exception {
		CommandLine cli = CommandLines.of(new Commands());
		CommandLine.ParseResult parsed = cli.parseArgs(args);
		if (CommandLine.printHelpIfRequested(parsed)) {
			return;
		}
		if (parsed.subcommand() == null) {
			throw new CommandLine.ParameterException(cli, "Missing command: schedule, history or replay");
		}
		((Callable<?>) parsed.subcommand().commandSpec().userObject()).call();
	}

	@Command(name = "TraceReplay", mixinStandardHelpOptions = true,
			subcommands = { Schedule.class, FromHistory.class, ReplayTraces.class },
			description = "Records traces and replays them against gpumem's lenders, one step at a time.")
	static final class Commands {

	}

	@Command(name = "schedule", mixinStandardHelpOptions = true, sortOptions = false,
			description = "Writes the service replay's schedules as traces, one per shape and worker count.")
	static final class Schedule implements Callable<Void> {

		@Option(names = "--shapes", split = ",", defaultValue = "uniform", paramLabel = "SHAPE",
				description = "${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
		List<RequestShape> shapes;

		@Option(names = "--workers", split = ",", defaultValue = "64", paramLabel = "N",
				description = "Worker counts (default: ${DEFAULT-VALUE}).")
		int[] workers;

		@Option(names = "--requests", defaultValue = "20000", description = "Requests (default: ${DEFAULT-VALUE}).")
		int requests;

		@Option(names = "--dir", defaultValue = ".", description = "Where the traces go (default: ${DEFAULT-VALUE}).")
		Path dir;

		@Override
		public Void call() throws IOException {
			Files.createDirectories(this.dir);
			for (RequestShape shape : this.shapes) {
				for (int workers : this.workers) {
					Trace trace = Trace.schedule(shape, workers, this.requests, ServiceReplay.MEAN_PAUSE, 0);
					trace.write(this.dir.resolve(trace.name() + ".trace"));
					System.out.printf(Locale.ROOT, "%s: %d acquires, peak lent %d bytes%n", trace.name(),
							trace.acquires(), trace.peakLentBytes());
				}
			}
			return null;
		}

	}

	@Command(name = "history", mixinStandardHelpOptions = true,
			description = "Turns a pool history recorded with buffers: all into a trace.")
	static final class FromHistory implements Callable<Void> {

		@Parameters(index = "0", paramLabel = "HISTORY.json", description = "The history, as the endpoint answers it.")
		Path history;

		@Parameters(index = "1", paramLabel = "NAME", description = "The trace's name.")
		String name;

		@Parameters(index = "2", paramLabel = "OUT", description = "The trace file to write.")
		Path out;

		@Override
		public Void call() throws IOException {
			PoolHistory recorded = JsonMapper.shared().readValue(this.history.toFile(), PoolHistory.class);
			Trace.fromHistory(recorded, this.name).write(this.out);
			return null;
		}

	}

	@Command(name = "replay", mixinStandardHelpOptions = true, sortOptions = false,
			description = "Replays traces against lenders, appending a JSON record a line per trace and lender.")
	static final class ReplayTraces implements Callable<Void> {

		@Option(names = "--backend", defaultValue = "host",
				description = "host, cuda or fake-cuda (default: ${DEFAULT-VALUE}).")
		String backend;

		@Option(names = "--lenders", split = ",", defaultValue = "gpumem", paramLabel = "NAME",
				description = "The lenders (default: ${DEFAULT-VALUE}).")
		List<String> lenders;

		@Option(names = "--out", defaultValue = "replays.jsonl",
				description = "The file the records are appended to (default: ${DEFAULT-VALUE}).")
		Path out;

		@Parameters(arity = "1..*", paramLabel = "TRACE", description = "The traces to replay.")
		List<Path> traces;

		@Override
		public Void call() throws Exception {
			replayAll(this.traces, this.backend, this.lenders, this.out);
			return null;
		}

	}

	private static void replayAll(List<Path> traces, String backendType, List<String> lenders, Path out)
			throws Exception {
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
