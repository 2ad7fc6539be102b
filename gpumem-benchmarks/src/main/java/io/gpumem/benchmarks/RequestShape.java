package io.gpumem.benchmarks;

import java.util.Locale;
import java.util.SplittableRandom;

/** What buffers one request of the {@link ServiceWorkload} takes, drawn from the request's own random stream. */
enum RequestShape {

	/** Three buffers of one size drawn log-uniformly from 4 KiB to 4 MiB, and one of 256 B. */
	UNIFORM("uniform", "3 buffers of one size, log-uniform in 4 KiB-4 MiB, plus one of 256 B", 4) {
		@Override
		long[] sizes(SplittableRandom random) {
			long size = logUniform(random, 4L << 10, 4L << 20);
			return new long[] { size, size, size, 256 };
		}
	},

	/**
	 * The device-pool buffers of the sample service's requests: add (30%) and saxpy (20%) take three
	 * vectors of n floats; reduce (30%) one; PageRank (20%) of n nodes with 8 edges each takes ranks, next
	 * ranks, contributions, out-degrees, row starts (n + 1 ints) and 8n sources. n is log-uniform in
	 * 1 000 to 1 000 000 elements, or 1 000 to 100 000 nodes.
	 */
	SAMPLE("sample", "the sample service's device buffers: add, saxpy, reduce, PageRank", 6) {
		@Override
		long[] sizes(SplittableRandom random) {
			int op = random.nextInt(10);
			if (op < 5) {
				long vector = 4 * logUniform(random, 1_000, 1_000_000);
				return new long[] { vector, vector, vector };
			}
			if (op < 8) {
				return new long[] { 4 * logUniform(random, 1_000, 1_000_000) };
			}
			long nodes = logUniform(random, 1_000, 100_000);
			long vector = 4 * nodes;
			return new long[] { vector, vector, vector, vector, vector + 4, 8 * vector };
		}
	};

	final String name;

	final String description;

	private final int maxBuffers;

	RequestShape(String name, String description, int maxBuffers) {
		this.name = name;
		this.description = description;
		this.maxBuffers = maxBuffers;
	}

	/** The sizes of the buffers of one request. */
	abstract long[] sizes(SplittableRandom random);

	/** The most buffers one request takes. */
	int maxBuffers() {
		return this.maxBuffers;
	}

	static RequestShape named(String name) {
		return valueOf(name.toUpperCase(Locale.ROOT));
	}

	private static long logUniform(SplittableRandom random, long min, long max) {
		return Math.round(Math.exp(random.nextDouble(Math.log(min), Math.log(max))));
	}

}
