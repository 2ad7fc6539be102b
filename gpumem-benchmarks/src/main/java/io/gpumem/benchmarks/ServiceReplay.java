package io.gpumem.benchmarks;

import java.util.Arrays;
import java.util.Locale;

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
	static final double MEAN_PAUSE = 0.2;

	private ServiceReplay() {
	}

	public static void main(String[] args) throws Exception {
		ServiceWorkload.Options options = CommandLines.parseOrExit(new ServiceWorkload.Command(), args);
		if (options == null) {
			return;
		}
		System.out.printf(Locale.ROOT, "Service replay: %d requests of shape '%s' (%s), one step at a time, on the %s "
				+ "backend, %d seeds%n%n", options.requests(), options.shape().name, options.shape().description,
				options.backend(), options.repeat());
		System.out.println("| workers | lender | held / lent, each seed | mean | worst | fresh allocations |");
		System.out.println("|---|---|---|---|---|---|");
		try (GpuBackend backend = ServiceWorkload.backend(options.backend())) {
			for (int workers : options.workers()) {
				for (String lender : options.lenders()) {
					TraceReplay.Replayed[] runs = new TraceReplay.Replayed[options.repeat()];
					for (int seed = 0; seed < runs.length; seed++) {
						runs[seed] = TraceReplay.replay(Trace.schedule(options.shape(), workers, options.requests(),
								MEAN_PAUSE, seed), Lender.create(lender, backend));
					}
					System.out.println(row(workers, lender, runs));
				}
			}
		}
	}

	private static String row(int workers, String lender, TraceReplay.Replayed[] runs) {
		double[] ratios = Arrays.stream(runs).mapToDouble(TraceReplay.Replayed::heldPerLent).toArray();
		long fresh = Arrays.stream(runs).mapToLong(TraceReplay.Replayed::freshAllocations).sum();
		long acquires = Arrays.stream(runs).mapToLong(TraceReplay.Replayed::acquires).sum();
		String each = String.join(" ", Arrays.stream(ratios).mapToObj((r) -> String.format(Locale.ROOT, "%.3f", r))
			.toArray(String[]::new));
		String freshShare = (fresh < 0) ? "–" : String.format(Locale.ROOT, "%.2f%%", 100.0 * fresh / acquires);
		return String.format(Locale.ROOT, "| %d | %s | %s | %.3f | %.3f | %s |", workers, lender, each,
				Arrays.stream(ratios).average().orElse(0), Arrays.stream(ratios).max().orElse(0), freshShare);
	}

}
