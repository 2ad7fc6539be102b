package io.gpumem.benchmarks;

import java.util.Locale;
import java.util.SplittableRandom;

import io.gpumem.pool.SizeClassLadder;

/**
 * Prints bytes reserved per byte requested for a log-uniform stream of requests from 256 B to 1 MiB,
 * for the default ladder, plain powers of two and the seed's 4×-spaced buckets.
 * <p>
 * Run: {@code java -cp gpumem-benchmarks/target/benchmarks.jar io.gpumem.benchmarks.SizeClassWaste}
 */
public final class SizeClassWaste {

	private SizeClassWaste() {
	}

	public static void main(String[] args) {
		int count = (args.length > 0) ? Integer.parseInt(args[0]) : 1_000_000;
		SplittableRandom random = new SplittableRandom(2026);
		double low = Math.log(256);
		double high = Math.log(1 << 20);
		long[] requests = new long[count];
		for (int i = 0; i < count; i++) {
			requests[i] = Math.round(Math.exp(low + random.nextDouble() * (high - low)));
		}
		print("default (4 per power of two, 128 B aligned)", SizeClassLadder.defaultLadder(), requests);
		print("powers of two", SizeClassLadder.geometric(256, 1 << 20, 1, 1), requests);
		print("seed 4x buckets (256 B ... 1 MiB)", SizeClassLadder.of(256, 1024, 4096, 16384, 65536, 262144, 1 << 20),
				requests);
	}

	private static void print(String name, SizeClassLadder ladder, long[] requests) {
		System.out.printf(Locale.ROOT, "%-45s %3d classes  reserved/requested %.3f%n", name, ladder.count(),
				ladder.reservedOverRequested(requests));
	}

}
