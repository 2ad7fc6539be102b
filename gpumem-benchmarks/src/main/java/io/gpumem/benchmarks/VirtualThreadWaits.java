package io.gpumem.benchmarks;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;
import picocli.CommandLine;
import picocli.CommandLine.Option;

import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.CudaKernel;
import io.gpumem.stream.GpuStream;

/**
 * Requests on virtual threads that wait for a kernel each: gpumem's parking wait against JCuda's pinning one.
 * <p>
 * Every request launches a kernel on a stream of its own and waits for it, as a Spring service with
 * {@code spring.threads.virtual.enabled} serves them: through gpumem's wait, which parks the virtual thread, and
 * through JCuda's {@code cuStreamSynchronize}, which holds its carrier while the GPU works.
 * Reported for each: requests per second, and the p99 latency of a health probe (a task submitted to a virtual thread
 * every 10 ms, timed until it runs). Run it on Java 21 or later, on a GPU or on the stub driver with kernels that take
 * {@code GPUMEM_STUB_KERNEL_MICROS}, its carriers set by {@code -Djdk.virtualThreadScheduler.parallelism}:
 * <pre>{@code
 * gpumem-core/src/test/stub-driver/build.sh target/stub-driver
 * LD_LIBRARY_PATH=target/stub-driver GPUMEM_STUB_KERNEL_MICROS=20000 $JAVA25_HOME/bin/java \
 *     -Djdk.virtualThreadScheduler.parallelism=2 --enable-native-access=ALL-UNNAMED \
 *     -cp gpumem-benchmarks/target/benchmarks.jar io.gpumem.benchmarks.VirtualThreadWaits
 * }</pre>
 */
public final class VirtualThreadWaits {

	/** A kernel that does nothing, so that the wait is all a request costs: its time is the GPU's (or the stub's). */
	private static final String PTX = String.join("\n", ".version 8.0", ".target sm_75", ".address_size 64", "",
			".visible .entry idle()", "{", "\tret;", "}", "");

	private VirtualThreadWaits() {
	}

	public static void main(String[] args) throws Exception {
		Options options = CommandLines.parseOrExit(new Command(), args);
		if (options == null) {
			return;
		}
		int carriers = Integer.getInteger("jdk.virtualThreadScheduler.parallelism",
				Runtime.getRuntime().availableProcessors());
		System.out.printf(Locale.ROOT, "Virtual-thread waits: %d requests, %d at once, on %d carrier(s), after %d "
				+ "requests to warm up; kernels of %s%n%n", options.requests, options.concurrency, carriers,
				options.warmup, (System.getenv("GPUMEM_STUB_KERNEL_MICROS") != null)
						? System.getenv("GPUMEM_STUB_KERNEL_MICROS") + " us (the stub driver)" : "the GPU's time");
		System.out.println("| wait | requests/s | health probe p99 (ms) | probes |");
		System.out.println("|---|---|---|---|");
		try (CudaBackend backend = CudaBackend.open(0)) {
			CudaKernel kernel = backend.loadModule(PTX.getBytes(StandardCharsets.US_ASCII)).kernel("idle");
			run(backend, kernel, Wait.GPUMEM, new Options(options.warmup, options.concurrency, 1, 0, List.of()));
			for (int round = 0; round < options.rounds; round++) {
				for (Wait wait : options.waits) {
					System.out.println(run(backend, kernel, wait, options).row());
				}
			}
		}
	}

	static Result run(CudaBackend backend, CudaKernel kernel, Wait wait, Options options) throws Exception {
		ExecutorService virtual = virtualThreads();
		Semaphore inFlight = new Semaphore(options.concurrency);
		AtomicBoolean running = new AtomicBoolean(true);
		List<Long> probes = new ArrayList<>();
		FutureTask<Void> prober = new FutureTask<>(() -> probe(virtual, running, probes), null);
		new Thread(prober, "health-probe").start();
		long start = System.nanoTime();
		List<Future<?>> requests = new ArrayList<>(options.requests);
		for (int r = 0; r < options.requests; r++) {
			inFlight.acquire();
			requests.add(virtual.submit(() -> {
				try (GpuStream stream = backend.createStream()) {
					kernel.launch(stream, 1, 1);
					wait.await(backend, stream);
				}
				finally {
					inFlight.release();
				}
				return null;
			}));
		}
		for (Future<?> request : requests) {
			request.get();
		}
		long elapsed = System.nanoTime() - start;
		running.set(false);
		prober.get();
		virtual.shutdown();
		virtual.awaitTermination(1, TimeUnit.MINUTES);
		long[] sorted = probes.stream().mapToLong(Long::longValue).sorted().toArray();
		long p99 = (sorted.length > 0)
				? sorted[(int) Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] : 0;
		return new Result(wait, options.requests * 1e9 / elapsed, p99 / 1e6, sorted.length);
	}

	/** Every 10 ms, a task on a virtual thread of the same scheduler, timed from its submission until it runs. */
	private static void probe(ExecutorService virtual, AtomicBoolean running, List<Long> probes) {
		try {
			while (running.get()) {
				long submitted = System.nanoTime();
				long ran = virtual.submit(System::nanoTime).get();
				probes.add(ran - submitted);
				Thread.sleep(10);
			}
		}
		catch (Exception ex) {
			throw new IllegalStateException("the health probe failed", ex);
		}
	}

	private static ExecutorService virtualThreads() throws ReflectiveOperationException {
		try {
			return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
		}
		catch (NoSuchMethodException ex) {
			throw new IllegalStateException("virtual threads need Java 21 or later, not " + Runtime.version(), ex);
		}
	}

	/** How a request waits for its kernel. */
	enum Wait {

		/** {@link GpuStream#synchronize()}: a virtual thread parks between polls of an event. */
		GPUMEM {

			@Override
			void await(CudaBackend backend, GpuStream stream) {
				stream.synchronize();
			}

		},

		/** {@code cuStreamSynchronize} through JCuda: the carrier waits in the driver. */
		JCUDA {

			@Override
			void await(CudaBackend backend, GpuStream stream) {
				backend.makeContextCurrent();
				int result = JCudaDriver.cuStreamSynchronize(stream.unwrap(CUstream.class));
				if (result != 0) {
					throw new IllegalStateException("cuStreamSynchronize answered " + result);
				}
			}

		};

		abstract void await(CudaBackend backend, GpuStream stream);

	}

	record Result(Wait by, double requestsPerSecond, double probeP99Millis, int probes) {

		String row() {
			return String.format(Locale.ROOT, "| %s | %.0f | %.1f | %d |", this.by.name().toLowerCase(Locale.ROOT),
					this.requestsPerSecond, this.probeP99Millis, this.probes);
		}

	}

	record Options(int requests, int concurrency, int rounds, int warmup, List<Wait> waits) {
	}

	@CommandLine.Command(name = "VirtualThreadWaits", mixinStandardHelpOptions = true, sortOptions = false,
			description = "Requests on virtual threads waiting for a kernel each: requests per second and a health "
					+ "probe's p99 latency, with gpumem's wait and with JCuda's cuStreamSynchronize.")
	static final class Command implements Callable<Options> {

		@Option(names = "--requests", defaultValue = "2000", description = "Requests per wait and round (default: "
				+ "${DEFAULT-VALUE}).")
		int requests;

		@Option(names = "--warmup", defaultValue = "2000", description = "Requests with gpumem's wait before the "
				+ "measured rounds, not reported (default: ${DEFAULT-VALUE}).")
		int warmup;

		@Option(names = "--concurrency", defaultValue = "200", description = "Requests in flight at once (default: "
				+ "${DEFAULT-VALUE}).")
		int concurrency;

		@Option(names = "--rounds", defaultValue = "1", description = "Times each wait is measured, alternating "
				+ "(default: ${DEFAULT-VALUE}).")
		int rounds;

		@Option(names = "--waits", split = ",", paramLabel = "NAME", defaultValue = "gpumem,jcuda",
				description = "The waits to measure: ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
		List<Wait> waits;

		@Override
		public Options call() {
			if (this.requests < 1 || this.concurrency < 1 || this.rounds < 1 || this.warmup < 1) {
				throw new IllegalArgumentException("requests, concurrency, rounds and warmup must be positive, not "
						+ Arrays.asList(this.requests, this.concurrency, this.rounds, this.warmup));
			}
			return new Options(this.requests, this.concurrency, this.rounds, this.warmup, List.copyOf(this.waits));
		}

	}

}
