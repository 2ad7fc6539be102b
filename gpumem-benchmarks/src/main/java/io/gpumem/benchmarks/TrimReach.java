package io.gpumem.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

import io.gpumem.allocator.StatisticsAllocator;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.ByteSizes;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;

/**
 * What a trim reaches over expandable segments, per mapping step, when live blocks lie strewn among free ones: 400
 * requests log-uniform from 1 KiB to 8 MiB on one thread, every third kept and the others closed, then
 * {@code trim(0)}; printed are the peak held, the bytes still lent, what the pool holds after the trim and the
 * driver allocations (runs mapped) the sequence made, on the host backend, whose mapping follows CUDA's rules.
 * <pre>{@code java -cp gpumem-benchmarks/target/benchmarks.jar io.gpumem.benchmarks.TrimReach 2,4,8,20}</pre>
 * The argument lists the steps in MiB (2, 4, 8 and 20 by default).
 */
public final class TrimReach {

	private static final long MIB = 1L << 20;

	private TrimReach() {
	}

	public static void main(String[] args) {
		long[] steps = Arrays.stream(((args.length > 0) ? args[0] : "2,4,8,20").split(","))
			.mapToLong((step) -> Long.parseLong(step.trim()) * MIB)
			.toArray();
		System.out.println("| mapping step | peak held | lent | held after trim(0) | driver allocations |");
		System.out.println("|---|---|---|---|---|");
		for (long step : steps) {
			System.out.println(run(step));
		}
	}

	private static String run(long step) {
		try (HostBackend backend = new HostBackend(1L << 30)) {
			StatisticsAllocator physical = new StatisticsAllocator(backend.virtualMemory().allocator());
			try (StratifiedMemoryPool pool = new StratifiedMemoryPool(physical,
					PoolConfig.builder("trim-reach").mappingStep(step).build())) {
				List<PooledBuffer> buffers = new ArrayList<>();
				for (long size : SizeClassWaste.logUniform(400, 1024, 8 * MIB, new SplittableRandom(400))) {
					buffers.add(pool.acquire(size));
				}
				long peak = pool.reservedBytes();
				long lent = 0;
				for (int i = 0; i < buffers.size(); i++) {
					if (i % 3 == 0) {
						lent += buffers.get(i).size();
					}
					else {
						buffers.get(i).close();
					}
				}
				pool.trim(0);
				String row = String.format(Locale.ROOT, "| %s | %s | %s | %s | %d |", ByteSizes.format(step),
						ByteSizes.format(peak), ByteSizes.format(lent), ByteSizes.format(pool.reservedBytes()),
						physical.statistics().totalCount());
				for (int i = 0; i < buffers.size(); i += 3) {
					buffers.get(i).close();
				}
				return row;
			}
		}
	}

}
