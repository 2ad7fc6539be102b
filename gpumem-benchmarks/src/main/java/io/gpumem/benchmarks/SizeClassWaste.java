package io.gpumem.benchmarks;

import java.util.Locale;
import java.util.SplittableRandom;
import java.util.stream.LongStream;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.SizeClassLadder;
import io.gpumem.pool.StratifiedMemoryPool;

/**
 * Prints bytes reserved per byte requested for the default pool (classes up to 64 KiB, requests cut to
 * their size above), its default ladder alone, plain powers of two and the seed's 4×-spaced buckets, on
 * two request streams: log-uniform from 256 B to 1 MiB, and the buffers the sample's PageRank asks for,
 * request after request, on generated graphs.
 * <p>
 * Run: {@code java -cp gpumem-benchmarks/target/benchmarks.jar io.gpumem.benchmarks.SizeClassWaste}
 */
public final class SizeClassWaste {

	private SizeClassWaste() {
	}

	public static void main(String[] args) {
		int count = (args.length > 0) ? Integer.parseInt(args[0]) : 1_000_000;
		long[] logUniform = logUniform(count, 256, 1 << 20, new SplittableRandom(2026));
		long[] pageRank = pageRank(count / 10, new SplittableRandom(2026));
		System.out.printf(Locale.ROOT, "%-45s %8s  %-12s %-12s%n", "ladder", "classes", "log-uniform", "PageRank");
		try (StratifiedMemoryPool pool = new StratifiedMemoryPool(new HostBackend(1L << 20).allocator(MemoryKind.DEVICE),
				PoolConfig.builder("waste").build())) {
			System.out.printf(Locale.ROOT, "%-45s %8d  %-12.3f %-12.3f%n", "the pool (default; cut to size above 64 KiB)",
					pool.sizeClasses().count(), reservedOverRequested(pool, logUniform),
					reservedOverRequested(pool, pageRank));
		}
		print("default (4 per power of two, 128 B aligned)", SizeClassLadder.defaultLadder(), logUniform, pageRank);
		print("powers of two (256 B ... 64 MiB)", SizeClassLadder.geometric(256, 64L << 20, 1, 1), logUniform, pageRank);
		print("seed 4x buckets (256 B ... 64 MiB)", SizeClassLadder.of(256, 1024, 4096, 16384, 65536, 262144, 1 << 20,
				4 << 20, 16 << 20, 64 << 20), logUniform, pageRank);
	}

	/** Request sizes spread evenly over the logarithm, from {@code low} to {@code high} bytes. */
	static long[] logUniform(int count, long low, long high, SplittableRandom random) {
		double logLow = Math.log(low);
		double logHigh = Math.log(high);
		return LongStream.generate(() -> Math.round(Math.exp(logLow + random.nextDouble() * (logHigh - logLow))))
			.limit(count)
			.toArray();
	}

	/**
	 * What {@code PageRankService} asks the pools for per request, on graphs whose node count is spread
	 * evenly over the logarithm from 1 000 to 1 000 000 with 2 to 16 edges per node: device buffers for
	 * rank, next rank, contributions and out-degrees (4 bytes per node each), row starts (4 bytes per
	 * node and one more) and edge sources (4 bytes per edge); pinned staging for the upload (all of
	 * those but next rank and contributions, in one buffer) and for the download of the ranks.
	 */
	static long[] pageRank(int requests, SplittableRandom random) {
		long[] nodes = logUniform(requests, 1_000, 1_000_000, random);
		LongStream.Builder sizes = LongStream.builder();
		for (long n : nodes) {
			long m = n * (2 + random.nextInt(15));
			long[] device = { 4 * n, 4 * n, 4 * n, 4 * n, 4 * (n + 1), 4 * m };
			for (long size : device) {
				sizes.add(size);
			}
			sizes.add(4 * n + 4 * n + 4 * (n + 1) + 4 * m);
			sizes.add(4 * n);
		}
		return sizes.build().toArray();
	}

	private static double reservedOverRequested(StratifiedMemoryPool pool, long[] requests) {
		double requested = 0;
		double reserved = 0;
		for (long request : requests) {
			requested += request;
			reserved += pool.blockSize(request);
		}
		return reserved / requested;
	}

	private static void print(String name, SizeClassLadder ladder, long[] logUniform, long[] pageRank) {
		System.out.printf(Locale.ROOT, "%-45s %8d  %-12.3f %-12.3f%n", name, ladder.count(),
				ladder.reservedOverRequested(logUniform), ladder.reservedOverRequested(pageRank));
	}

}
