package io.gpumem.benchmarks;

import java.util.Arrays;
import java.util.Comparator;
import java.util.Locale;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import io.gpumem.backend.GpuBackend;

/**
 * The {@link ServiceWorkload}'s requests replayed one step at a time, so that held / lent and fresh allocations
 * depend on the lender alone, not on how a loaded machine schedules its threads. Each of {@code N} workers runs on a
 * thread of its own, but one step runs at a time, in an order drawn from a seed: a worker holds a request's buffers
 * for an exponential time of mean 1 and starts its next request after one of mean 1/5. The options are the
 * workload's ({@code --workers --requests --shape --backend --lenders}), with {@code --repeat} the number of seeds;
 * its others are read and ignored. A row gives held / lent for each seed, their mean and worst, and the fresh
 * allocations over all seeds.
 * <pre>{@code java -cp gpumem-benchmarks/target/benchmarks.jar io.gpumem.benchmarks.ServiceReplay --repeat 10}</pre>
 */
public final class ServiceReplay {

	/** A worker's mean time between the end of one request and the start of the next, in units of a mean hold. */
	private static final double MEAN_PAUSE = 0.2;

	private ServiceReplay() {
	}

	public static void main(String[] args) throws Exception {
		ServiceWorkload.Options options = ServiceWorkload.Options.parse(args);
		System.out.printf(Locale.ROOT, "Service replay: %d requests of shape '%s' (%s), one step at a time, on the %s "
				+ "backend, %d seeds%n%n", options.requests(), options.shape().name, options.shape().description,
				options.backend(), options.repeat());
		System.out.println("| workers | lender | held / lent, each seed | mean | worst | fresh allocations |");
		System.out.println("|---|---|---|---|---|---|");
		try (GpuBackend backend = ServiceWorkload.backend(options.backend())) {
			for (int workers : options.workers()) {
				for (String lender : options.lenders()) {
					Replayed[] runs = new Replayed[options.repeat()];
					for (int seed = 0; seed < runs.length; seed++) {
						runs[seed] = replay(Lender.create(lender, backend), workers, options, seed);
					}
					System.out.println(row(workers, lender, runs));
				}
			}
		}
	}

	/** Replays the options' requests against a fresh lender, in the order seed {@code seed} draws, and closes it. */
	static Replayed replay(Lender lender, int workers, ServiceWorkload.Options options, long seed)
			throws InterruptedException, ExecutionException {
		ExecutorService[] threads = new ExecutorService[workers];
		Arrays.setAll(threads, (w) -> Executors.newSingleThreadExecutor());
		try (lender) {
			SplittableRandom order = new SplittableRandom(seed);
			PriorityQueue<Step> steps = new PriorityQueue<>(Comparator.comparingDouble(Step::time));
			for (int w = 0; w < workers; w++) {
				steps.add(new Step(order.nextDouble(), w));
			}
			Object[][] buffers = new Object[workers][];
			long[] requested = new long[workers];
			long lent = 0;
			long peakLent = 0;
			long peakHeld = 0;
			long acquires = 0;
			byte[] payload = new byte[64];
			for (int started = 0, done = 0; done < options.requests();) {
				Step step = steps.poll();
				int w = step.worker();
				if (buffers[w] == null && started < options.requests()) {
					long[] sizes = options.shape().sizes(new SplittableRandom(started++));
					buffers[w] = on(threads[w], () -> {
						Object[] taken = new Object[sizes.length];
						for (int i = 0; i < sizes.length; i++) {
							taken[i] = lender.acquire(sizes[i]);
							lender.write(taken[i], payload);
						}
						return taken;
					});
					requested[w] = Arrays.stream(sizes).sum();
					acquires += sizes.length;
					lent += requested[w];
					peakLent = Math.max(peakLent, lent);
					peakHeld = Math.max(peakHeld, lender.heldBytes());
					steps.add(new Step(step.time() + exponential(order, 1), w));
				}
				else if (buffers[w] != null) {
					Object[] taken = buffers[w];
					on(threads[w], () -> Arrays.stream(taken).forEach(lender::release));
					buffers[w] = null;
					lent -= requested[w];
					done++;
					steps.add(new Step(step.time() + exponential(order, MEAN_PAUSE), w));
				}
			}
			return new Replayed(Math.max(peakHeld, lender.peakHeldBytes()), peakLent, lender.freshAllocations(),
					acquires);
		}
		finally {
			for (ExecutorService thread : threads) {
				thread.shutdown();
				thread.awaitTermination(10, TimeUnit.SECONDS);
			}
		}
	}

	private static String row(int workers, String lender, Replayed[] runs) {
		double[] ratios = Arrays.stream(runs).mapToDouble(Replayed::heldPerLent).toArray();
		long fresh = Arrays.stream(runs).mapToLong(Replayed::freshAllocations).sum();
		long acquires = Arrays.stream(runs).mapToLong(Replayed::acquires).sum();
		String each = String.join(" ", Arrays.stream(ratios).mapToObj((r) -> String.format(Locale.ROOT, "%.3f", r))
			.toArray(String[]::new));
		String freshShare = (fresh < 0) ? "–" : String.format(Locale.ROOT, "%.2f%%", 100.0 * fresh / acquires);
		return String.format(Locale.ROOT, "| %d | %s | %s | %.3f | %.3f | %s |", workers, lender, each,
				Arrays.stream(ratios).average().orElse(0), Arrays.stream(ratios).max().orElse(0), freshShare);
	}

	private static double exponential(SplittableRandom random, double mean) {
		return -mean * Math.log(1 - random.nextDouble());
	}

	private static <T> T on(ExecutorService thread, Callable<T> step) throws InterruptedException, ExecutionException {
		return thread.submit(step).get();
	}

	private static void on(ExecutorService thread, Runnable step) throws InterruptedException, ExecutionException {
		thread.submit(step).get();
	}

	/** A worker's next step, at a time in units of a mean hold. */
	private record Step(double time, int worker) {
	}

	/** What one replay measured. */
	record Replayed(long peakHeld, long peakLent, long freshAllocations, long acquires) {

		double heldPerLent() {
			return (double) this.peakHeld / this.peakLent;
		}

	}

}
