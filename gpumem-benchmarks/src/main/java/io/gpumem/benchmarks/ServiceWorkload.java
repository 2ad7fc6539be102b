package io.gpumem.benchmarks;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.gpumem.backend.BackendSelection;
import io.gpumem.backend.BackendType;
import io.gpumem.backend.GpuBackend;
import io.gpumem.memory.ByteSizes;

/**
 * The service workload, the yardstick of gpumem's pools: {@code N} worker threads fed from one FIFO
 * queue, as Tomcat's executor is, so that a request rarely runs on the thread that released the buffers
 * it could reuse. Each request takes its buffers ({@link RequestShape}), writes to each, holds them for
 * a while (parked, as a thread waiting on the GPU is) and closes them; the run starts cold. Every
 * lender ({@link Lender}) serves the same requests in one run, at every worker count:
 * <ul>
 * <li>req/s, from the first request queued to the last answered;</li>
 * <li>peak lent: the most bytes requested and not yet closed at once; peak held: the most the lender
 * held from the device at once (for Netty, the direct memory of its chunks, sampled after every
 * request's acquires); held / lent, where 1.0 is the physical limit;</li>
 * <li>fresh allocations: calls to the backend's allocator (on a GPU, each a {@code cuMemAlloc});</li>
 * <li>p99 of one acquire's latency;</li>
 * <li>what the lender still holds after it is trimmed to nothing while the workers are alive and idle.</li>
 * </ul>
 * Options, all optional: {@code --workers 16,64,200 --requests 20000 --hold-us 20 --shape uniform|sample
 * --backend host|cuda --lenders gpumem,netty,netty-cache,backend --json FILE}. Before measuring, every lender
 * serves a quarter of the requests once, so that the JIT has compiled every lender's path; each measured
 * run then starts from a new, empty lender.
 * <pre>{@code java -cp gpumem-benchmarks/target/benchmarks.jar io.gpumem.benchmarks.ServiceWorkload}</pre>
 */
public final class ServiceWorkload {

	private ServiceWorkload() {
	}

	public static void main(String[] args) throws Exception {
		Options options = Options.parse(args);
		try (GpuBackend backend = backend(options.backend)) {
			System.out.printf(Locale.ROOT,
					"Service workload: %d requests of shape '%s' (%s), each held %d µs, on the %s backend (%s)%n%n",
					options.requests, options.shape.name, options.shape.description, options.holdMicros,
					backend.name(), backend.deviceName());
			System.out.println("| workers | lender | req/s | peak lent | peak held | held / lent | fresh allocations "
					+ "| p99 acquire | held after trim(0), workers idle |");
			System.out.println("|---|---|---|---|---|---|---|---|---|");
			Options warmUp = options.withRequests(Math.max(1, options.requests / 4));
			for (String lender : options.lenders) {
				run(Lender.create(lender, backend), options.workers[options.workers.length - 1], warmUp);
			}
			List<Result> results = new ArrayList<>();
			for (int workers : options.workers) {
				for (String lender : options.lenders) {
					Result result = run(Lender.create(lender, backend), workers, options);
					System.out.println(result.row());
					results.add(result);
				}
			}
			if (options.json != null) {
				Files.writeString(Path.of(options.json), Result.json(results));
			}
		}
	}

	private static GpuBackend backend(String type) {
		return BackendSelection.select(BackendType.valueOf(type.toUpperCase(Locale.ROOT)), 0, 8L << 30).backend();
	}

	/** Runs the workload with {@code workers} threads against a fresh lender, and closes the lender. */
	static Result run(Lender lender, int workers, Options options) throws InterruptedException {
		int buffersPerRequest = options.shape.maxBuffers();
		long[] latencies = new long[options.requests * buffersPerRequest];
		AtomicLong lent = new AtomicLong();
		AtomicLong peakLent = new AtomicLong();
		AtomicLong peakHeld = new AtomicLong();
		AtomicLong acquires = new AtomicLong();
		CountDownLatch done = new CountDownLatch(options.requests);
		ThreadPoolExecutor executor = new ThreadPoolExecutor(workers, workers, 1, TimeUnit.MINUTES,
				new LinkedBlockingQueue<>());
		executor.prestartAllCoreThreads();
		byte[] payload = new byte[64];
		List<Throwable> failures = new ArrayList<>();
		try (lender) {
			long start = System.nanoTime();
			for (int r = 0; r < options.requests; r++) {
				int request = r;
				executor.execute(() -> {
					try {
						long[] sizes = options.shape.sizes(new SplittableRandom(request));
						Object[] handles = new Object[sizes.length];
						long bytes = 0;
						for (int i = 0; i < sizes.length; i++) {
							long begin = System.nanoTime();
							handles[i] = lender.acquire(sizes[i]);
							latencies[request * buffersPerRequest + i] = System.nanoTime() - begin;
							bytes += sizes[i];
						}
						acquires.addAndGet(sizes.length);
						peakLent.accumulateAndGet(lent.addAndGet(bytes), Math::max);
						peakHeld.accumulateAndGet(lender.heldBytes(), Math::max);
						for (Object handle : handles) {
							lender.write(handle, payload);
						}
						LockSupport.parkNanos(options.holdMicros * 1000L);
						lent.addAndGet(-bytes);
						for (Object handle : handles) {
							lender.release(handle);
						}
					}
					catch (Throwable ex) {
						synchronized (failures) {
							failures.add(ex);
						}
					}
					finally {
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
	record Result(int workers, String lender, double requestsPerSecond, long peakLent, long peakHeld,
			long freshAllocations, long acquires, long p99AcquireNanos, long heldAfterTrim) {

		double heldPerLent() {
			return (double) this.peakHeld / this.peakLent;
		}

		static String json(List<Result> results) {
			StringBuilder json = new StringBuilder("[\n");
			for (Result r : results) {
				json.append(String.format(Locale.ROOT, "  {\"workers\": %d, \"lender\": \"%s\", \"requestsPerSecond\": %.1f, "
						+ "\"peakLentBytes\": %d, \"peakHeldBytes\": %d, \"heldPerLent\": %.3f, \"freshAllocations\": %d, "
						+ "\"acquires\": %d, \"p99AcquireNanos\": %d, \"heldAfterTrimBytes\": %d}", r.workers, r.lender,
						r.requestsPerSecond, r.peakLent, r.peakHeld, r.heldPerLent(), r.freshAllocations, r.acquires,
						r.p99AcquireNanos, r.heldAfterTrim));
				json.append((r == results.get(results.size() - 1)) ? "\n" : ",\n");
			}
			return json.append("]\n").toString();
		}

		String row() {
			String fresh = (this.freshAllocations < 0) ? "–"
					: String.format(Locale.ROOT, "%d (%.2f%%)", this.freshAllocations,
							100.0 * this.freshAllocations / this.acquires);
			return String.format(Locale.ROOT, "| %d | %s | %.0f | %s | %s | %.2f | %s | %.1f µs | %s |", this.workers,
					this.lender, this.requestsPerSecond, ByteSizes.format(this.peakLent),
					ByteSizes.format(this.peakHeld), heldPerLent(), fresh, this.p99AcquireNanos / 1000.0,
					ByteSizes.format(this.heldAfterTrim));
		}

	}

	/** The run's settings, from the command line. */
	record Options(int[] workers, int requests, long holdMicros, RequestShape shape, String backend,
			List<String> lenders, String json) {

		Options withRequests(int count) {
			return new Options(this.workers, count, this.holdMicros, this.shape, this.backend, this.lenders, this.json);
		}

		static Options parse(String[] args) {
			Map<String, String> values = new LinkedHashMap<>();
			values.put("--workers", "16,64,200");
			values.put("--requests", "20000");
			values.put("--hold-us", "20");
			values.put("--shape", "uniform");
			values.put("--backend", "host");
			values.put("--lenders", String.join(",", Lender.NAMES));
			values.put("--json", null);
			for (int i = 0; i < args.length; i += 2) {
				if (!values.containsKey(args[i]) || i + 1 == args.length) {
					throw new IllegalArgumentException("unknown option or missing value: " + args[i] + "; options are "
							+ values.keySet());
				}
				values.put(args[i], args[i + 1]);
			}
			return new Options(Arrays.stream(values.get("--workers").split(",")).mapToInt(Integer::parseInt).toArray(),
					Integer.parseInt(values.get("--requests")), Long.parseLong(values.get("--hold-us")),
					RequestShape.named(values.get("--shape")), values.get("--backend"),
					List.of(values.get("--lenders").split(",")), values.get("--json"));
		}

	}

}
