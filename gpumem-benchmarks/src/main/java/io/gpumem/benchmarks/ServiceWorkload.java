package io.gpumem.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

import picocli.CommandLine;
import picocli.CommandLine.Option;
import tools.jackson.databind.json.JsonMapper;

import io.gpumem.backend.BackendType;
import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.device.BackendSelection;
import io.gpumem.memory.ByteSizes;

/**
 * The service workload, the yardstick of gpumem's pools: {@code N} worker threads fed from one FIFO queue, as
 * Tomcat's executor is, so that a request rarely runs on the thread that released the buffers it could reuse. Each
 * request takes its buffers ({@link RequestShape}), writes to each, holds them for a while ({@link Hold}: parked, as a
 * thread blocked on the GPU is, or spinning, as one in {@code cuStreamSynchronize} does under CUDA's default
 * scheduling) and closes them; each run starts from an empty lender. Every lender ({@link Lender}) serves the same
 * requests in one run, at every worker count:
 * <ul>
 * <li>req/s, from the first request queued to the last answered;</li>
 * <li>peak lent: the most bytes lent at once, a buffer counted from the return of its acquire to the return of
 * its close, while the lender has it out (counted down before the close, a thread preempted or waiting in
 * it would hold memory that no count shows); peak held: the most the lender
 * held from the device at once (for Netty, the direct memory of its chunks, sampled after every
 * request's acquires); held / lent, where 1.0 is the physical limit;</li>
 * <li>fresh allocations: calls to the backend's allocator (on a GPU, each a {@code cuMemAlloc}, or for
 * {@code gpumem-cuda-async} a {@code cuMemAllocFromPoolAsync});</li>
 * <li>p99 of one acquire's latency;</li>
 * <li>what the lender still holds after it is trimmed to nothing while the workers are alive and idle.</li>
 * </ul>
 * Options, all optional: {@code --workers 16,64,200 --requests 20000 --hold-us 20 --hold park|spin --start warm|cold
 * --shape uniform|sample --backend host|cuda|fake-cuda --lenders gpumem,gpumem-fixed,gpumem-cuda-async,netty,
 * netty-cache,backend --repeat 3 --json FILE}; {@code gpumem} is the default configuration (expandable segments where
 * the backend has virtual memory), {@code gpumem-fixed} its arena over fixed segments; {@code gpumem-unrecorded} and
 * {@code spin-<nanoseconds>} run only where named ({@link Lender#DIAGNOSTIC}). With a {@code warm} start, every
 * lender first runs once at each worker count, unmeasured, so that the JIT has compiled every path, then {@code repeat}
 * times at each, each time from a new, empty lender, in a JVM of its own per lender, as JMH forks; a {@code cold} one
 * measures from the JVM's start, as a service's first requests are served: each run in a JVM of its own. The run of
 * median req/s is shown (a run of 20 000 requests lasts a fraction of a second, and these machines are noisy).
 * <pre>{@code java -cp gpumem-benchmarks/target/benchmarks.jar io.gpumem.benchmarks.ServiceWorkload}</pre>
 */
public final class ServiceWorkload {

	private static final JsonMapper JSON = JsonMapper.shared();

	private ServiceWorkload() {
	}

	public static void main(String[] args) throws Exception {
		Options options = CommandLines.parseOrExit(new Command(), args);
		if (options == null) {
			return;
		}
		List<Result> results = new ArrayList<>();
		for (String lender : options.lenders) {
			if (options.warm) {
				results.addAll(fork(options.forLender(lender, options.workers, options.repeat)));
				continue;
			}
			for (int workers : options.workers) {
				List<Result> runs = new ArrayList<>();
				for (int r = 0; r < options.repeat; r++) {
					runs.addAll(fork(options.forLender(lender, new int[] { workers }, 1)));
				}
				results.add(median(runs));
			}
		}
		results.sort(Comparator.comparingInt(Result::workers));
		System.out.printf(Locale.ROOT, "Service workload: %d requests of shape '%s' (%s), each held %d µs %s, on the %s "
				+ "backend, %s start, %s threads, median of %d runs%n%n", options.requests, options.shape.name,
				options.shape.description, options.holdMicros, options.hold.description, options.backend,
				options.warm ? "warm" : "cold", options.threads.name().toLowerCase(Locale.ROOT), options.repeat);
		System.out.println("| workers | lender | req/s | peak lent | peak held | held / lent | fresh allocations "
				+ "| p99 acquire | held after trim(0), workers idle |");
		System.out.println("|---|---|---|---|---|---|---|---|---|");
		results.forEach((result) -> System.out.println(result.row()));
		if (options.json != null) {
			JSON.writerWithDefaultPrettyPrinter()
				.writeValue(options.json.toFile(), results.stream().map(Result::reported).toList());
		}
	}

	/** One lender's runs in the JVM {@link #fork} starts: each result a line of JSON on standard output. */
	static final class Forked {

		private Forked() {
		}

		public static void main(String[] args) throws Exception {
			Options options = CommandLines.parseOrExit(new Command(), args);
			for (Result result : measure(options)) {
				System.out.println(JSON.writeValueAsString(result));
			}
		}

	}

	/** Measures one lender in a JVM of its own, as JMH forks, so that no lender's garbage or JIT state weighs on another's. */
	private static List<Result> fork(List<String> args) throws IOException, InterruptedException {
		List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-Xms2g", "-Xmx2g", "-XX:MaxDirectMemorySize=8g", "-cp", System.getProperty("java.class.path"),
				Forked.class.getName()));
		command.addAll(args);
		Process child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
		List<Result> results = new ArrayList<>();
		try (BufferedReader lines = child.inputReader()) {
			for (String line; (line = lines.readLine()) != null;) {
				results.add(JSON.readValue(line, Result.class));
			}
		}
		if (child.waitFor() != 0) {
			throw new IllegalStateException("the run of " + args + " failed with exit code " + child.exitValue());
		}
		return results;
	}

	/**
	 * Warms every lender of the options up with one run per worker count, where the start is warm, then runs each
	 * {@code repeat} times per worker count and keeps the median run.
	 */
	private static List<Result> measure(Options options) throws InterruptedException {
		List<Result> results = new ArrayList<>();
		try (GpuBackend backend = backend(options.backend)) {
			if (options.warm) {
				for (String lender : options.lenders) {
					for (int workers : options.workers) {
						run(Lender.create(lender, backend), workers, options);
					}
				}
			}
			for (int workers : options.workers) {
				for (String lender : options.lenders) {
					List<Result> runs = new ArrayList<>();
					for (int r = 0; r < options.repeat; r++) {
						runs.add(run(Lender.create(lender, backend), workers, options));
					}
					results.add(median(runs));
				}
			}
		}
		return results;
	}

	/** The run of median req/s. */
	private static Result median(List<Result> runs) {
		runs.sort(Comparator.comparingDouble(Result::requestsPerSecond));
		return runs.get(runs.size() / 2);
	}

	/**
	 * The backend named: {@code host}, {@code cuda}, or {@code fake-cuda}, the CUDA backend over the fake driver of
	 * gpumem's tests (1 GiB, as one of its ranges of addresses holds less than 2), whose stream-ordered pool and
	 * virtual-memory calls follow CUDA's rules where no GPU is lent, and whose {@code cuMemAlloc}, {@code cuMemCreate}
	 * and {@code cuMemUnmap} take what allocating and freeing 2 MiB, growing by a granule and unmapping one took on an
	 * H100 (76.3, 43.7 and 32.4 µs, docs/gpu-verification.md).
	 */
	static GpuBackend backend(String type) {
		if (type.equals("fake-cuda")) {
			return CudaBackend.open(new FakeCudaDriver(1L << 30).withMemoryCallTimes(Duration.ofNanos(76_300),
					Duration.ofNanos(43_700), Duration.ofNanos(32_400)), 0);
		}
		return BackendSelection.select(BackendType.valueOf(type.toUpperCase(Locale.ROOT)), 0, 8L << 30).backend();
	}

	/**
	 * Runs the workload with {@code workers} threads against a fresh lender, and closes the lender. The
	 * collector runs first, so that what earlier lenders left behind (Netty's allocators free their
	 * chunks only when collected) does not weigh on this run.
	 */
	static Result run(Lender lender, int workers, Options options) throws InterruptedException {
		System.gc();
		Thread.sleep(200);
		int buffersPerRequest = options.shape.maxBuffers();
		long[] latencies = new long[options.requests * buffersPerRequest];
		AtomicLong lent = new AtomicLong();
		AtomicLong peakLent = new AtomicLong();
		AtomicLong peakHeld = new AtomicLong();
		AtomicLong acquires = new AtomicLong();
		CountDownLatch done = new CountDownLatch(options.requests);
		ExecutorService executor = options.threads.executor(workers);
		Semaphore inFlight = new Semaphore(workers);
		byte[] payload = new byte[64];
		List<Throwable> failures = new ArrayList<>();
		try (lender) {
			long start = System.nanoTime();
			for (int r = 0; r < options.requests; r++) {
				int request = r;
				if (options.threads == Threads.VIRTUAL) {
					inFlight.acquire();
				}
				executor.execute(() -> {
					try {
						long[] sizes = options.shape.sizes(new SplittableRandom(request));
						Object[] handles = new Object[sizes.length];
						for (int i = 0; i < sizes.length; i++) {
							long begin = System.nanoTime();
							handles[i] = lender.acquire(sizes[i]);
							latencies[request * buffersPerRequest + i] = System.nanoTime() - begin;
							peakLent.accumulateAndGet(lent.addAndGet(sizes[i]), Math::max);
						}
						acquires.addAndGet(sizes.length);
						peakHeld.accumulateAndGet(lender.heldBytes(), Math::max);
						for (Object handle : handles) {
							lender.write(handle, payload);
						}
						options.hold.hold(options.holdMicros * 1000L);
						for (int i = 0; i < sizes.length; i++) {
							lender.release(handles[i]);
							lent.addAndGet(-sizes[i]);
						}
					}
					catch (Throwable ex) {
						synchronized (failures) {
							failures.add(ex);
						}
					}
					finally {
						if (options.threads == Threads.VIRTUAL) {
							inFlight.release();
						}
						done.countDown();
					}
				});
			}
			done.await();
			double seconds = (System.nanoTime() - start) / 1e9;
			if (!failures.isEmpty()) {
				throw new IllegalStateException(failures.size() + " requests failed, the first with "
						+ failures.get(0), failures.get(0));
			}
			long heldAfterTrim = lender.heldAfterTrim();
			long[] measured = Arrays.stream(latencies).filter((nanos) -> nanos > 0).sorted().toArray();
			long p99 = measured[(int) Math.min(measured.length - 1, Math.ceil(measured.length * 0.99) - 1)];
			return new Result(workers, lender.name(), options.requests / seconds, peakLent.get(),
					Math.max(peakHeld.get(), lender.peakHeldBytes()), lender.freshAllocations(), acquires.get(), p99,
					heldAfterTrim);
		}
		finally {
			executor.shutdown();
			executor.awaitTermination(1, TimeUnit.MINUTES);
		}
	}

	/**
	 * What one lender did at one worker count.
	 *
	 * @param freshAllocations calls to the backend's allocator, or -1 where the lender does not say
	 */
	record Result(int workers, String lender, double requestsPerSecond, long peakLentBytes, long peakHeldBytes,
			long freshAllocations, long acquires, long p99AcquireNanos, long heldAfterTrimBytes) {

		double heldPerLent() {
			return (double) this.peakHeldBytes / this.peakLentBytes;
		}

		/** The result as the {@code --json} file reports it: with held / lent, and figures rounded as the table shows. */
		Map<String, Object> reported() {
			Map<String, Object> reported = new LinkedHashMap<>();
			reported.put("workers", this.workers);
			reported.put("lender", this.lender);
			reported.put("requestsPerSecond", Math.round(this.requestsPerSecond * 10) / 10.0);
			reported.put("peakLentBytes", this.peakLentBytes);
			reported.put("peakHeldBytes", this.peakHeldBytes);
			reported.put("heldPerLent", Math.round(heldPerLent() * 1000) / 1000.0);
			reported.put("freshAllocations", this.freshAllocations);
			reported.put("acquires", this.acquires);
			reported.put("p99AcquireNanos", this.p99AcquireNanos);
			reported.put("heldAfterTrimBytes", this.heldAfterTrimBytes);
			return reported;
		}

		String row() {
			String fresh = (this.freshAllocations < 0) ? "–"
					: String.format(Locale.ROOT, "%d (%.2f%%)", this.freshAllocations,
							100.0 * this.freshAllocations / this.acquires);
			return String.format(Locale.ROOT, "| %d | %s | %.0f | %s | %s | %.2f | %s | %.1f µs | %s |", this.workers,
					this.lender, this.requestsPerSecond, ByteSizes.format(this.peakLentBytes),
					ByteSizes.format(this.peakHeldBytes), heldPerLent(), fresh, this.p99AcquireNanos / 1000.0,
					ByteSizes.format(this.heldAfterTrimBytes));
		}

	}

	/** How a request's thread waits out its hold, as a thread waits for the GPU's work. */
	enum Hold {

		/** Parked: a thread blocked on an event or a stream under CUDA's blocking synchronization. */
		PARK("parked") {
			@Override
			void hold(long nanos) {
				long end = System.nanoTime() + nanos;
				for (long left = nanos; left > 0; left = end - System.nanoTime()) {
					LockSupport.parkNanos(left);
				}
			}
		},

		/** Spinning on its core: a thread in {@code cuStreamSynchronize} under CUDA's default scheduling. */
		SPIN("spinning") {
			@Override
			void hold(long nanos) {
				long end = System.nanoTime() + nanos;
				while (System.nanoTime() - end < 0) {
					Thread.onSpinWait();
				}
			}
		};

		final String description;

		Hold(String description) {
			this.description = description;
		}

		/** Waits {@code nanos} nanoseconds, at least. */
		abstract void hold(long nanos);

	}

	/** The run's settings, from the command line. */
	record Options(int[] workers, int requests, long holdMicros, Hold hold, boolean warm, RequestShape shape,
			String backend, List<String> lenders, int repeat, Path json, Threads threads) {

		/**
		 * The options {@code args} set, the others at their defaults.
		 * @throws CommandLine.ParameterException naming an option that is unknown, lacks its value or cannot take it
		 */
		static Options parse(String... args) {
			Command command = new Command();
			CommandLines.of(command).parseArgs(args);
			return command.call();
		}

		/** The arguments of a forked run of one {@code lender}, at {@code workers}, {@code repeat} times. */
		List<String> forLender(String lender, int[] workers, int repeat) {
			return List.of("--workers", Arrays.stream(workers).mapToObj(Integer::toString).collect(Collectors.joining(",")),
					"--requests", Integer.toString(this.requests), "--hold-us", Long.toString(this.holdMicros),
					"--hold", this.hold.name(), "--start", this.warm ? "warm" : "cold", "--shape", this.shape.name(),
					"--backend", this.backend, "--lenders", lender, "--repeat", Integer.toString(repeat), "--threads",
					this.threads.name());
		}

	}

	/**
	 * Who runs the requests: {@code workers} platform threads fed from one queue, as Tomcat's pool; or a virtual thread
	 * per request, at most {@code workers} at once, as Tomcat with {@code spring.threads.virtual.enabled} (Java 21 and
	 * later).
	 */
	enum Threads {

		PLATFORM {

			@Override
			ExecutorService executor(int workers) {
				ThreadPoolExecutor executor = new ThreadPoolExecutor(workers, workers, 1, TimeUnit.MINUTES,
						new LinkedBlockingQueue<>());
				executor.prestartAllCoreThreads();
				return executor;
			}

		},

		VIRTUAL {

			@Override
			ExecutorService executor(int workers) {
				try {
					return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
				}
				catch (ReflectiveOperationException ex) {
					throw new IllegalStateException("virtual threads need Java 21 or later, not " + Runtime.version(),
							ex);
				}
			}

		};

		abstract ExecutorService executor(int workers);

	}

	/** Whether a run measures after a run of each lender at each worker count, or from the JVM's start. */
	enum Start {

		WARM, COLD

	}

	@CommandLine.Command(name = "ServiceWorkload", mixinStandardHelpOptions = true, sortOptions = false,
			description = "The service workload: worker threads fed from one queue acquire, hold and close buffers.")
	static final class Command implements Callable<Options> {

		@Option(names = "--workers", split = ",", defaultValue = "16,64,200", paramLabel = "N",
				description = "Worker threads, a run at each count (default: ${DEFAULT-VALUE}).")
		int[] workers;

		@Option(names = "--requests", defaultValue = "20000", description = "Requests per run (default: ${DEFAULT-VALUE}).")
		int requests;

		@Option(names = "--hold-us", defaultValue = "20",
				description = "How long a request holds its buffers, in µs (default: ${DEFAULT-VALUE}).")
		long holdMicros;

		@Option(names = "--hold", defaultValue = "park",
				description = "How a request waits out its hold: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
		Hold hold;

		@Option(names = "--start", defaultValue = "warm",
				description = "${COMPLETION-CANDIDATES}: after a run of each lender, or from the JVM's start (default: "
						+ "${DEFAULT-VALUE}).")
		Start start;

		@Option(names = "--shape", defaultValue = "uniform",
				description = "The requests' buffers: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
		RequestShape shape;

		@Option(names = "--backend", defaultValue = "host", description = "host, cuda or fake-cuda (default: "
				+ "${DEFAULT-VALUE}).")
		String backend;

		@Option(names = "--lenders", split = ",", paramLabel = "NAME",
				description = "The lenders to measure (default: all of gpumem, gpumem-fixed, gpumem-cuda-async, netty, "
						+ "netty-cache, backend).")
		List<String> lenders = new ArrayList<>(Lender.NAMES);

		@Option(names = "--repeat", defaultValue = "3", description = "Runs per cell, the median kept (default: "
				+ "${DEFAULT-VALUE}).")
		int repeat;

		@Option(names = "--json", paramLabel = "FILE", description = "Also write the results to FILE as JSON.")
		Path json;

		@Option(names = "--threads", defaultValue = "platform", description = "${COMPLETION-CANDIDATES}: workers fed "
				+ "from one queue, or a virtual thread per request, --workers at once (default: ${DEFAULT-VALUE}).")
		Threads threads;

		@Override
		public Options call() {
			return new Options(this.workers, this.requests, this.holdMicros, this.hold, this.start == Start.WARM,
					this.shape, this.backend, List.copyOf(this.lenders), this.repeat, this.json, this.threads);
		}

	}

}
