package io.gpumem.pool;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.CudaException;
import io.gpumem.cuda.FakeCudaDriver;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fake driver's refusals of {@code cuMemUnmap}, and where asked of the copies between pinned memory and the
 * device that a sleep and a wake make, as a failed device's: one in a given number, drawn from a seed, until ended;
 * each refusal must reach a caller of the pool ({@link #report}) or the pool's log, none lost.
 */
public final class RefusedUnmaps implements Consumer<String> {

	/** Refuses nothing, and counts no failure as a refusal: for a driver that refuses none. */
	public static final RefusedUnmaps NONE = new RefusedUnmaps(0, 0);

	private static final String UNMAP = "cuMemUnmap";

	/** The copies between pinned memory and the device: a sleep's offload, a wake's copy back. */
	private static final Set<String> COPIES = Set.of("cuMemcpyDtoHAsync", "cuMemcpyHtoDAsync");

	private final int oneIn;

	private final Set<String> calls;

	private final SplittableRandom random;

	private final AtomicLong refused = new AtomicLong();

	private final AtomicLong reported = new AtomicLong();

	private volatile boolean ended;

	/** Refuses one unmap in {@code oneIn}, drawn from {@code seed}, on the backends it opens ({@link #open}). */
	public RefusedUnmaps(int oneIn, long seed) {
		this(oneIn, seed, Set.of(UNMAP));
	}

	private RefusedUnmaps(int oneIn, long seed, Set<String> calls) {
		this.oneIn = oneIn;
		this.random = new SplittableRandom(seed);
		this.calls = calls;
	}

	/**
	 * Refuses one unmap in {@code oneIn}, and one copy between pinned memory and the device in {@code oneIn}, as a
	 * sleep's offload and a wake's copy back are, drawn from {@code seed}.
	 */
	public static RefusedUnmaps andCopies(int oneIn, long seed) {
		Set<String> calls = new HashSet<>(COPIES);
		calls.add(UNMAP);
		return new RefusedUnmaps(oneIn, seed, calls);
	}

	/**
	 * A CUDA backend on a fake driver of {@code capacity} bytes that refuses unmaps as this says once open: its probe of
	 * virtual memory, made here, maps and unmaps a granule, which a refusal would have it report unsupported.
	 */
	public CudaBackend open(long capacity) {
		FakeCudaDriver driver = new FakeCudaDriver(capacity);
		CudaBackend backend = CudaBackend.open(driver, 0);
		assertThat(backend.virtualMemory().supported()).as("virtual memory, probed").isTrue();
		driver.pausingMemoryCalls(this);
		return backend;
	}

	@Override
	public void accept(String call) {
		if (this == NONE || !this.calls.contains(call) || this.ended) {
			return;
		}
		boolean refuse;
		synchronized (this.random) {
			refuse = this.random.nextInt(this.oneIn) == 0;
		}
		if (refuse) {
			this.refused.incrementAndGet();
			throw new CudaException(call, 1, "CUDA_ERROR_INVALID_VALUE");
		}
	}

	/** Refuses no more: what follows gives everything back. */
	public void end() {
		this.ended = true;
	}

	/** How many calls were refused. */
	public long refused() {
		return this.refused.get();
	}

	/**
	 * Counts {@code failure}, which reached a caller of the pool, as one of the refusals, with those suppressed in it;
	 * rethrows any other, and every failure where this is {@link #NONE}.
	 */
	public void report(CudaException failure) {
		if (this == NONE || !isRefusal(failure)) {
			throw failure;
		}
		this.reported.addAndGet(refusalsIn(failure));
	}

	/** How many refusals reached a caller ({@link #report}). */
	public long reported() {
		return this.reported.get();
	}

	/** How many refusals {@code logged} (a {@link PoolLog}'s) holds, with those suppressed in each. */
	public static long refusalsIn(List<Throwable> logged) {
		return logged.stream().mapToLong(RefusedUnmaps::refusalsIn).sum();
	}

	/** How many refusals {@code failure} is, or holds suppressed, as a map's unmaps again each refused are. */
	private static long refusalsIn(Throwable failure) {
		long refusals = isRefusal(failure) ? 1 : 0;
		for (Throwable suppressed : failure.getSuppressed()) {
			refusals += refusalsIn(suppressed);
		}
		return refusals;
	}

	private static boolean isRefusal(Throwable failure) {
		return failure instanceof CudaException cuda && (cuda.call().equals(UNMAP) || COPIES.contains(cuda.call()));
	}

}
