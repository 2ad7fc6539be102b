package io.gpumem.pool.diagnostics;

import java.security.CodeSource;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongUnaryOperator;

import io.gpumem.memory.MemoryHolder;
import io.gpumem.stream.GpuStream;
import io.gpumem.stream.StreamOrder;

/**
 * Where a pool's lent buffers were acquired, as its {@link BufferRecording} asks: a recorded buffer's acquire and
 * close go into the pool's {@link MemoryHistory}, and the lend of one whose frames are kept (all, or a sample by
 * bytes) keeps the stack of its acquire while it is lent (a {@link Throwable}, whose frames are read only when a
 * report needs them: a fraction of a {@link StackWalker} walk's cost), so that the largest holders can be named,
 * a sampled buffer counted for all it stands for, when an acquire fails.
 */
final class AcquireSites {

	/** How many frames outside gpumem name a site. */
	private static final int FRAMES = 6;

	private static final String LOCATION = location(AcquireSites.class);

	/**
	 * Whether a class, by name, is gpumem's own: of its packages and loaded from where this class was (an
	 * application's classes packed into one archive with gpumem are not).
	 */
	private static final Map<String, Boolean> GPUMEM = new ConcurrentHashMap<>();

	private final MemoryHistory history;

	/** The lent buffers whose frames are kept. */
	private final Set<Lend> lent = ConcurrentHashMap.newKeySet();

	/** The bytes from which a recorded buffer always keeps its frames ({@link BufferRecording#framesEveryBytes}). */
	private final long framesEvery;

	/** A number drawn evenly below its bound, which it is given: the odds of keeping a buffer's frames. */
	private final LongUnaryOperator draw;

	AcquireSites(MemoryHistory history, long framesEvery) {
		this(history, framesEvery, (bound) -> ThreadLocalRandom.current().nextLong(bound));
	}

	AcquireSites(MemoryHistory history, long framesEvery, LongUnaryOperator draw) {
		this.history = history;
		this.framesEvery = framesEvery;
		this.draw = draw;
	}

	/**
	 * Records the lend of {@code block}, of {@code blockBytes}, to a buffer of {@code requestedBytes} whose acquire
	 * began at {@code acquiringNanos} ({@link MemoryHistory#acquiring}), keeping where it was acquired while it is lent
	 * where the recording keeps its frames ({@link BufferRecording#framesEveryBytes}), in the history's ring
	 * {@code ring}.
	 */
	Lend lent(Object block, long requestedBytes, long blockBytes, long acquiringNanos, int ring) {
		long sequence = this.history.claim(ring);
		double weight = weight(blockBytes);
		Lend lend = new Lend(this, (weight > 0) ? block : null, requestedBytes, blockBytes, acquiringNanos,
				this.history.bufferNumber(ring, sequence), ring, StreamOrder.current(), weight);
		if (weight > 0) {
			this.lent.add(lend);
		}
		this.history.put(ring, sequence, MemoryEvent.Type.ACQUIRE, acquiringNanos, requestedBytes, blockBytes,
				lend.buffer, lend.stream, lend.sampled());
		return lend;
	}

	/** The lends whose frames are kept, by their block. */
	Map<Object, PoolRecorder.Lend> lends() {
		Map<Object, PoolRecorder.Lend> lends = new IdentityHashMap<>();
		this.lent.forEach((lend) -> {
			Object block = lend.block;
			if (block != null) {
				lends.put(block, lend);
			}
		});
		return lends;
	}

	/**
	 * How many buffers of {@code blockBytes} a recorded one stands for among the holders where it keeps its frames:
	 * 1 from {@link #framesEvery} bytes, else the inverse of its odds; 0 where it does not keep them.
	 */
	private double weight(long blockBytes) {
		if (blockBytes >= this.framesEvery) {
			return 1;
		}
		return (this.draw.applyAsLong(this.framesEvery) < blockBytes) ? (double) this.framesEvery / blockBytes : 0;
	}

	/**
	 * The {@code count} largest holders by bytes lent, largest first: each buffer whose frames are kept counted as
	 * many times as it stands for.
	 */
	List<MemoryHolder> top(int count) {
		Map<List<String>, Holding> sites = new HashMap<>();
		for (Lend lend : this.lent) {
			Holding held = sites.computeIfAbsent(lend.frames(), (site) -> new Holding());
			held.bytes += lend.blockBytes * lend.weight;
			held.buffers += lend.weight;
			held.sampled |= lend.weight > 1;
		}
		return sites.entrySet()
			.stream()
			.map((site) -> new MemoryHolder(site.getKey(), Math.round(site.getValue().bytes),
					Math.round(site.getValue().buffers), site.getValue().sampled))
			.sorted(Comparator.comparingLong(MemoryHolder::bytes).reversed())
			.limit(count)
			.toList();
	}

	/** The acquiring code: the first frames outside gpumem. */
	private static List<String> frames(StackTraceElement[] stack) {
		return Arrays.stream(stack)
			.dropWhile((frame) -> GPUMEM.computeIfAbsent(frame.getClassName(), AcquireSites::isGpumem))
			.limit(FRAMES)
			.map((frame) -> frame.getClassName() + "." + frame.getMethodName() + "(" + frame.getFileName() + ":"
					+ frame.getLineNumber() + ")")
			.toList();
	}

	private static boolean isGpumem(String className) {
		if (!className.startsWith("io.gpumem.")) {
			return false;
		}
		try {
			Class<?> type = Class.forName(className, false, AcquireSites.class.getClassLoader());
			return LOCATION != null && LOCATION.equals(location(type));
		}
		catch (ClassNotFoundException | LinkageError ex) {
			return false;
		}
	}

	private static String location(Class<?> type) {
		CodeSource source = type.getProtectionDomain().getCodeSource();
		return (source != null && source.getLocation() != null) ? source.getLocation().toString() : null;
	}

	/** What the kept lends of one site add up to, each counted for as many buffers as it stands for. */
	private static final class Holding {

		double bytes;

		double buffers;

		boolean sampled;

	}

	/**
	 * A recorded buffer's lend: its number, when, on what stream and in which ring of the history it was acquired, its
	 * bytes, and the stack of its acquire where its frames are kept, while it is lent.
	 */
	static final class Lend implements PoolRecorder.Lend {

		private final AcquireSites sites;

		/** The block lent, a key the pool knows it by, while lent and its frames kept; null otherwise. */
		Object block;

		final long buffer;

		final long acquiredNanos;

		final long requestedBytes;

		final long blockBytes;

		/** The history's ring its acquire went to, and its close goes to. */
		final int ring;

		/** The stream the acquire was ordered on, or null. */
		final GpuStream stream;

		/** How many buffers this one stands for among the holders: 1 or more where its frames are kept, else 0. */
		final double weight;

		/** Where it was acquired, until its frames are read, where they are kept. */
		private Throwable site;

		/** The acquiring frames, once read. */
		private List<String> frames;

		Lend(AcquireSites sites, Object block, long requestedBytes, long blockBytes, long acquiredNanos, long buffer,
				int ring, GpuStream stream, double weight) {
			this.sites = sites;
			this.block = block;
			this.requestedBytes = requestedBytes;
			this.blockBytes = blockBytes;
			this.acquiredNanos = acquiredNanos;
			this.buffer = buffer;
			this.ring = ring;
			this.stream = stream;
			this.weight = weight;
			this.site = (weight > 0) ? new Throwable("acquired here") : null;
		}

		@Override
		public long acquiredNanos() {
			return this.acquiredNanos;
		}

		@Override
		public GpuStream stream() {
			return this.stream;
		}

		@Override
		public synchronized List<String> frames() {
			if (this.frames == null) {
				this.frames = (this.site != null) ? AcquireSites.frames(this.site.getStackTrace()) : List.of();
				this.site = null;
			}
			return this.frames;
		}

		/** The lend where its frames are kept, for its events to carry; null otherwise. */
		Lend sampled() {
			return (this.weight > 0) ? this : null;
		}

		/** Called as the buffer is closed or reclaimed. */
		void returned() {
			if (this.weight > 0) {
				this.sites.lent.remove(this);
				this.block = null;
			}
		}

	}

}
