package io.gpumem.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import picocli.CommandLine;
import picocli.CommandLine.Option;

import io.gpumem.admission.GpuAdmission;
import io.gpumem.admission.GpuAdmissionException;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.GpuRetryOutOfMemoryException;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;

/**
 * The service workload overloaded by memory, not by the CPU: {@code --workers} request threads run requests back to
 * back, each request taking {@code --buffers} buffers one after another and holding each step parked (a kernel on the
 * GPU), on a device that fits one in {@code --oversubscription} of the requests in flight. The same requests are
 * served under each {@link Admission}: waiting acquires alone, waiting acquires whose pool tells a thread to give way
 * where all holding memory wait, and claims of each request's bytes before it starts. Reported: goodput (requests
 * completed per second), the p99 latency of those completed (waits and runs again included), and the requests that
 * failed before they started (turned away holding nothing: a 503 with a retry-after) and after they started (holding
 * buffers: work lost).
 * <pre>{@code java -cp gpumem-benchmarks/target/benchmarks.jar io.gpumem.benchmarks.OverloadWorkload}</pre>
 */
public final class OverloadWorkload {

	private static final long MIB = 1L << 20;

	private OverloadWorkload() {
	}

	public static void main(String[] args) throws Exception {
		Options options = CommandLines.parseOrExit(new Command(), args);
		if (options == null) {
			return;
		}
		System.out.printf(Locale.ROOT, "Overload workload: %d workers, %d requests of %d buffers of %d-%d MiB, each step "
				+ "held %d ms parked, a device of %d MiB (%d requests in flight fit of %d), waits of at most %d ms%n%n",
				options.workers, options.requests, options.buffers, options.minMib, options.maxMib, options.stepMillis,
				options.capacity() / MIB, options.workers / options.oversubscription, options.workers,
				options.maxWait.toMillis());
		System.out.println("| admission | completed | goodput (req/s) | p99 latency (ms) | failed before start "
				+ "| failed after start | runs again (gave way) |");
		System.out.println("|---|---|---|---|---|---|---|");
		for (Admission admission : options.admissions) {
			System.out.println(run(admission, options).row());
		}
	}

	/** Serves the options' requests under {@code admission}, on a device and pool of their own. */
	static Result run(Admission admission, Options options) throws Exception {
		try (HostBackend backend = new HostBackend(options.capacity());
				StratifiedMemoryPool pool = new StratifiedMemoryPool(backend.virtualMemory().allocator(),
						PoolConfig.builder("overload")
							.maxWait(options.maxWait)
							.giveWay(admission == Admission.GIVE_WAY)
							.build())) {
			GpuAdmission byBytes = GpuAdmission.of(pool, options.maxWait);
			long[][] requests = requests(options);
			long[] latencies = new long[requests.length];
			AtomicInteger next = new AtomicInteger();
			LongAdder completed = new LongAdder();
			LongAdder failedBefore = new LongAdder();
			LongAdder failedAfter = new LongAdder();
			LongAdder runsAgain = new LongAdder();
			ExecutorService workers = Executors.newFixedThreadPool(options.workers);
			long start = System.nanoTime();
			List<Future<?>> running = new ArrayList<>();
			for (int w = 0; w < options.workers; w++) {
				running.add(workers.submit(() -> {
					for (int r = next.getAndIncrement(); r < requests.length; r = next.getAndIncrement()) {
						long begun = System.nanoTime();
						Outcome outcome = serve(admission, pool, byBytes, requests[r], options, runsAgain);
						switch (outcome) {
							case COMPLETED -> {
								completed.increment();
								latencies[r] = System.nanoTime() - begun;
							}
							case FAILED_BEFORE_START -> failedBefore.increment();
							case FAILED_AFTER_START -> failedAfter.increment();
						}
					}
					return null;
				}));
			}
			for (Future<?> worker : running) {
				worker.get();
			}
			long elapsed = System.nanoTime() - start;
			workers.shutdown();
			long[] served = Arrays.stream(latencies).filter((nanos) -> nanos > 0).sorted().toArray();
			long p99 = (served.length > 0) ? served[(int) Math.min(served.length - 1, Math.ceil(served.length * 0.99) - 1)]
					: 0;
			if (pool.statistics().inUseBytes() != 0) {
				throw new IllegalStateException("the pool still lends " + pool.statistics().inUseBytes() + " bytes");
			}
			return new Result(admission, completed.sum(), completed.sum() * 1e9 / elapsed, p99 / 1e6, failedBefore.sum(),
					failedAfter.sum(), runsAgain.sum());
		}
	}

	/** One request: its buffers one after another, each step held; run again from the start when told to give way. */
	private static Outcome serve(Admission admission, StratifiedMemoryPool pool, GpuAdmission byBytes, long[] sizes,
			Options options, LongAdder runsAgain) {
		for (;;) {
			List<PooledBuffer> held = new ArrayList<>(sizes.length);
			GpuAdmission.Permit permit = null;
			try {
				if (admission == Admission.CLAIMS) {
					permit = byBytes.enter(footprint(pool, sizes), options.maxWait);
				}
				for (long size : sizes) {
					held.add((permit != null) ? permit.acquire(size) : pool.acquire(size));
					ServiceWorkload.Hold.PARK.hold(options.stepMillis * 1_000_000L);
				}
				return Outcome.COMPLETED;
			}
			catch (GpuRetryOutOfMemoryException told) {
				runsAgain.increment();
			}
			catch (GpuAdmissionException | GpuOutOfMemoryException refused) {
				return held.isEmpty() ? Outcome.FAILED_BEFORE_START : Outcome.FAILED_AFTER_START;
			}
			finally {
				held.forEach(PooledBuffer::close);
				if (permit != null) {
					permit.close();
				}
			}
		}
	}

	private static long footprint(StratifiedMemoryPool pool, long[] sizes) {
		return Arrays.stream(sizes).map(pool::blockSize).sum();
	}

	/** The requests' buffer sizes, drawn from a fixed seed, so that every admission serves the same. */
	private static long[][] requests(Options options) {
		SplittableRandom random = new SplittableRandom(42);
		long[][] requests = new long[options.requests][options.buffers];
		for (long[] request : requests) {
			for (int b = 0; b < request.length; b++) {
				request[b] = random.nextLong(options.minMib * MIB, options.maxMib * MIB + 1);
			}
		}
		return requests;
	}

	/** How requests are let at the memory. */
	enum Admission {

		/** Each acquire waits for memory up to {@code --max-wait}; no thread is told to give way. */
		MAX_WAIT("max-wait alone"),

		/** As {@link #MAX_WAIT}, and where every thread holding memory waits, the one holding least gives way. */
		GIVE_WAY("max-wait, giving way"),

		/** Each request claims its bytes, waiting in line up to {@code --max-wait}, then takes its buffers. */
		CLAIMS("claims");

		final String description;

		Admission(String description) {
			this.description = description;
		}

	}

	private enum Outcome {

		COMPLETED, FAILED_BEFORE_START, FAILED_AFTER_START

	}

	record Result(Admission admission, long completed, double goodput, double p99Millis, long failedBeforeStart,
			long failedAfterStart, long runsAgain) {

		String row() {
			return String.format(Locale.ROOT, "| %s | %d | %.0f | %.1f | %d | %d | %d |", this.admission.description,
					this.completed, this.goodput, this.p99Millis, this.failedBeforeStart, this.failedAfterStart,
					this.runsAgain);
		}

	}

	/** The run's settings, from the command line. */
	record Options(int workers, int requests, int buffers, long minMib, long maxMib, long stepMillis,
			int oversubscription, Duration maxWait, List<Admission> admissions) {

		/** A device that fits one in {@code oversubscription} of the workers' requests at their mean size. */
		long capacity() {
			long meanRequest = this.buffers * (this.minMib + this.maxMib) * MIB / 2;
			return Math.max(this.maxMib * MIB * this.buffers, meanRequest * this.workers / this.oversubscription);
		}

		/**
		 * The options {@code args} set, the others at their defaults.
		 * @throws CommandLine.ParameterException naming an option that is unknown, lacks its value or cannot take it
		 */
		static Options parse(String... args) {
			Command command = new Command();
			CommandLines.of(command).parseArgs(args);
			return command.call();
		}

	}

	@CommandLine.Command(name = "OverloadWorkload", mixinStandardHelpOptions = true, sortOptions = false,
			description = "Requests of several buffers on a device that fits a tenth of them: each admission's goodput, "
					+ "p99 latency and failures.")
	static final class Command implements Callable<Options> {

		@Option(names = "--workers", defaultValue = "64", description = "Request threads (default: ${DEFAULT-VALUE}).")
		int workers;

		@Option(names = "--requests", defaultValue = "2000", description = "Requests per admission (default: "
				+ "${DEFAULT-VALUE}).")
		int requests;

		@Option(names = "--buffers", defaultValue = "3", description = "Buffers per request, taken one after another "
				+ "(default: ${DEFAULT-VALUE}).")
		int buffers;

		@Option(names = "--min-mib", defaultValue = "2", description = "Smallest buffer, in MiB (default: "
				+ "${DEFAULT-VALUE}).")
		long minMib;

		@Option(names = "--max-mib", defaultValue = "6", description = "Largest buffer, in MiB (default: "
				+ "${DEFAULT-VALUE}).")
		long maxMib;

		@Option(names = "--step-ms", defaultValue = "2", description = "How long each step of a request holds its "
				+ "buffers, parked, in ms (default: ${DEFAULT-VALUE}).")
		long stepMillis;

		@Option(names = "--oversubscription", defaultValue = "10", description = "Requests in flight per request the "
				+ "device fits (default: ${DEFAULT-VALUE}).")
		int oversubscription;

		@Option(names = "--max-wait", defaultValue = "PT2S", description = "The longest wait for memory or a claim, "
				+ "ISO-8601 (default: ${DEFAULT-VALUE}).")
		Duration maxWait;

		@Option(names = "--admissions", split = ",", paramLabel = "NAME", defaultValue = "max_wait,give_way,claims",
				description = "The admissions to run: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
		List<Admission> admissions;

		@Override
		public Options call() {
			if (this.workers < 1 || this.requests < 1 || this.buffers < 1 || this.minMib < 1 || this.maxMib < this.minMib
					|| this.oversubscription < 1) {
				throw new IllegalArgumentException("workers, requests, buffers, min-mib and oversubscription must be "
						+ "positive, and max-mib at least min-mib");
			}
			return new Options(this.workers, this.requests, this.buffers, this.minMib, this.maxMib, this.stepMillis,
					this.oversubscription, this.maxWait, List.copyOf(this.admissions));
		}

	}

}
