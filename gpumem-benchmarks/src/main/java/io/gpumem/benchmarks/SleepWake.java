package io.gpumem.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

import io.gpumem.backend.GpuBackend;
import io.gpumem.cuda.CudaBackend;
import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.SleepMode;
import io.gpumem.pool.SleepStatus;
import io.gpumem.pool.StratifiedMemoryPool;

/**
 * A device pool's sleep and wake with {@code gib} GiB lent in buffers of 1 to 64 MiB, each written with a pattern of
 * its own: the time each takes, the bytes released, offloaded and copied back, the device's memory used asleep, and a
 * check that every buffer reads its pattern after the wake. The pool is made as the starter makes it (the default
 * configuration, expandable segments); {@code runs} sleeps and wakes of the same buffers follow one another.
 * <p>
 * Run after the README's build, with room for the offloaded bytes in the backend's pinned memory (direct buffers on
 * the host backend, which the heap's size bounds by default):
 * {@code java -Xmx3g -cp gpumem-benchmarks/target/benchmarks.jar io.gpumem.benchmarks.SleepWake [gib] [runs] [host|cuda]}
 */
public final class SleepWake {

	private static final long MIB = 1L << 20;

	private SleepWake() {
	}

	public static void main(String[] args) {
		long lentBytes = (long) (Double.parseDouble((args.length > 0) ? args[0] : "1") * (1L << 30));
		int runs = (args.length > 1) ? Integer.parseInt(args[1]) : 5;
		boolean cuda = args.length > 2 && args[2].equals("cuda");
		try (GpuBackend backend = cuda ? CudaBackend.open(0) : new HostBackend(2 * lentBytes + 256 * MIB);
				StratifiedMemoryPool pool = new StratifiedMemoryPool(backend.virtualMemory().allocator(),
						PoolConfig.builder("device").build())) {
			SplittableRandom random = new SplittableRandom(67);
			List<PooledBuffer> buffers = new ArrayList<>();
			long lent = 0;
			while (lent < lentBytes) {
				long bytes = Math.min(lentBytes - lent, (1 + random.nextInt(64)) * MIB);
				PooledBuffer buffer = pool.acquire(bytes);
				buffer.fill((byte) buffers.size());
				buffers.add(buffer);
				lent += bytes;
			}
			System.out.printf(Locale.ROOT, "%s, %d buffers of 1-64 MiB, %.2f GiB lent, %.2f GiB reserved%n",
					backend.name(), buffers.size(), lent / (double) (1L << 30), pool.reservedBytes() / (double) (1L << 30));
			double[] sleepMillis = new double[runs];
			double[] wakeMillis = new double[runs];
			for (int run = 0; run < runs; run++) {
				SleepStatus.Sleep sleep = pool.sleep(SleepMode.OFFLOAD);
				long usedAsleep = used(backend);
				SleepStatus.Wake wake = pool.wake();
				sleepMillis[run] = sleep.duration().toNanos() / 1e6;
				wakeMillis[run] = wake.duration().toNanos() / 1e6;
				System.out.printf(Locale.ROOT,
						"run %d: sleep %.1f ms (%.2f GiB released, %.2f GiB offloaded, %.1f GB/s), device used asleep "
								+ "%d MiB; wake %.1f ms (%.2f GiB mapped, %.2f GiB copied back, %.1f GB/s)%n",
						run + 1, sleepMillis[run], gib(sleep.releasedBytes()), gib(sleep.offloadedBytes()),
						sleep.offloadedBytes() / (sleepMillis[run] * 1e6), usedAsleep / MIB, wakeMillis[run],
						gib(wake.mappedBytes()), gib(wake.restoredBytes()), wake.restoredBytes() / (wakeMillis[run] * 1e6));
			}
			for (int i = 0; i < buffers.size(); i++) {
				byte[] back = new byte[(int) Math.min(buffers.get(i).size(), 4096)];
				buffers.get(i).copyTo(buffers.get(i).size() - back.length, back, 0, back.length);
				for (byte b : back) {
					if (b != (byte) i) {
						throw new IllegalStateException("buffer " + i + " lost its pattern");
					}
				}
				buffers.get(i).close();
			}
			System.out.printf(Locale.ROOT, "every buffer read its pattern; sleep ms %s, wake ms %s (highest %.1f / %.1f)%n",
					Arrays.toString(round(sleepMillis)), Arrays.toString(round(wakeMillis)),
					Arrays.stream(sleepMillis).max().orElse(0), Arrays.stream(wakeMillis).max().orElse(0));
		}
	}

	private static double gib(long bytes) {
		return bytes / (double) (1L << 30);
	}

	private static long used(GpuBackend backend) {
		var info = backend.allocator(MemoryKind.DEVICE).memoryInfo();
		return info.totalBytes() - info.freeBytes();
	}

	private static double[] round(double[] millis) {
		return Arrays.stream(millis).map((m) -> Math.round(m * 10) / 10.0).toArray();
	}

}
