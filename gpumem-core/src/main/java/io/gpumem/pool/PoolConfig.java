package io.gpumem.pool;

import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.LongSupplier;

import io.gpumem.config.InvalidSettingException;
import io.gpumem.memory.ByteSizes;
import io.gpumem.pool.arena.Arena;
import io.gpumem.pool.diagnostics.HistoryConfig;

/**
 * The settings of a {@link StratifiedMemoryPool}: its ladder, warm-up, caps, trimming, retries and leak
 * detection. Built with {@link #builder(String)}; immutable.
 */
public final class PoolConfig {

	/**
	 * Classes up to this size keep closed buffers in the free lists; larger ones give them back to the arena, cut to
	 * the request's size. A class caches about what it used lately: kept small, as Netty's thread caches
	 * ({@code maxCachedBufferCapacity}) and jemalloc's ({@code tcache_max}) keep at most 32 KiB.
	 */
	public static final long FREE_LISTS_LIMIT = 64L << 10;

	private final String name;

	private final SizeClassLadder sizeClasses;

	private final Map<Long, Integer> warm;

	private final Map<Long, Integer> maxCachedBuffers;

	private final long maxCachedBytes;

	private final Duration idleTrimAfter;

	private final int oomRetries;

	private final Duration maxWait;

	private final boolean giveWay;

	private final LeakDetection leakDetection;

	private final SleepOnAcquire sleepOnAcquire;

	private final HistoryConfig history;

	private final int stripes;

	private final long segmentBytes;

	private final long mappingStepBytes;

	private final LongSupplier ticker;

	private PoolConfig(Builder builder) {
		this.name = builder.name;
		this.sizeClasses = builder.sizeClasses;
		this.warm = Collections.unmodifiableSortedMap(new TreeMap<>(builder.warm));
		this.maxCachedBuffers = Map.copyOf(builder.maxCachedBuffers);
		this.maxCachedBytes = builder.maxCachedBytes;
		this.idleTrimAfter = builder.idleTrimAfter;
		this.oomRetries = builder.oomRetries;
		this.maxWait = builder.maxWait;
		this.giveWay = builder.giveWay;
		this.leakDetection = builder.leakDetection;
		this.sleepOnAcquire = builder.sleepOnAcquire;
		this.history = builder.history;
		this.stripes = builder.stripes;
		this.segmentBytes = builder.segmentBytes;
		this.mappingStepBytes = builder.mappingStepBytes;
		this.ticker = builder.ticker;
		this.warm.forEach((size, count) -> this.sizeClasses.requireClass("warm", size, count, this.name));
		this.maxCachedBuffers
			.forEach((size, count) -> this.sizeClasses.requireClass("max-cached-buffers", size, count, this.name));
	}

	/** The default {@link #segmentBytes()}: 2 MiB. */
	public static final long DEFAULT_SEGMENT_BYTES = 2L << 20;

	/** The default {@link #mappingStepBytes()}: 4 MiB. */
	public static final long DEFAULT_MAPPING_STEP_BYTES = 4L << 20;

	/** A builder with the {@link PoolPreset#DEFAULT} settings. */
	public static Builder builder(String name) {
		return new Builder(name);
	}

	public String name() {
		return this.name;
	}

	public SizeClassLadder sizeClasses() {
		return this.sizeClasses;
	}

	/** Buffers allocated into each class when the pool starts, by class size, smallest first: the warm-up's order. */
	public Map<Long, Integer> warm() {
		return this.warm;
	}

	/** Most buffers cached per class, by class size; classes not listed are bounded by bytes only. */
	public Map<Long, Integer> maxCachedBuffers() {
		return this.maxCachedBuffers;
	}

	public long maxCachedBytes() {
		return this.maxCachedBytes;
	}

	/** How long a cached buffer may go unused before it is released, or {@code null} for never. */
	public Duration idleTrimAfter() {
		return this.idleTrimAfter;
	}

	public int oomRetries() {
		return this.oomRetries;
	}

	/** How long an acquire waits for memory to be returned when none can be had; zero for not at all. */
	public Duration maxWait() {
		return this.maxWait;
	}

	/**
	 * Whether, where every thread holding memory of the pool waits for more, the one holding most is told to give
	 * way ({@link io.gpumem.memory.GpuRetryOutOfMemoryException}).
	 */
	public boolean giveWay() {
		return this.giveWay;
	}

	public LeakDetection leakDetection() {
		return this.leakDetection;
	}

	/** What an acquire, or a use of a lent buffer, does while the pool sleeps; {@link SleepOnAcquire#WAKE} by default. */
	public SleepOnAcquire sleepOnAcquire() {
		return this.sleepOnAcquire;
	}

	/** What the pool's history keeps; {@link HistoryConfig#DEFAULT} by default. */
	public HistoryConfig history() {
		return this.history;
	}

	/** Number of free-list stripes, a power of two. */
	public int stripes() {
		return this.stripes;
	}

	/**
	 * The step in which the pool allocates the memory it cuts blocks from: a request of up to half of it is cut from
	 * a segment of this size, a larger one from one of its size rounded up to a multiple of it; over a
	 * {@linkplain io.gpumem.memory.MemoryAllocator#streamOrdered() stream-ordered} allocator, a segment per block.
	 */
	public long segmentBytes() {
		return this.segmentBytes;
	}

	/**
	 * Over expandable segments, the step in which the ranges of the blocks the free lists do not keep map memory,
	 * rounded down to the device's granules (one at least): a request that maps a granule maps the rest of its step
	 * with the same call, for the requests after it, or only its own granules where the device refuses the step. A
	 * trim gives a step back only whole.
	 */
	public long mappingStepBytes() {
		return this.mappingStepBytes;
	}

	/** The nanosecond clock that idle trimming measures how long a cached buffer went unused by. */
	public LongSupplier ticker() {
		return this.ticker;
	}

	/** Builds a {@link PoolConfig}; every setter validates its argument. */
	public static final class Builder {

		private final String name;

		private SizeClassLadder sizeClasses;

		private final Map<Long, Integer> warm = new TreeMap<>();

		private final Map<Long, Integer> maxCachedBuffers = new TreeMap<>();

		private long maxCachedBytes;

		private Duration idleTrimAfter;

		private int oomRetries = 3;

		private Duration maxWait = Duration.ZERO;

		private boolean giveWay = true;

		private LeakDetection leakDetection = LeakDetection.SIMPLE;

		private SleepOnAcquire sleepOnAcquire = SleepOnAcquire.WAKE;

		private HistoryConfig history = HistoryConfig.DEFAULT;

		private int stripes = defaultStripes();

		private long segmentBytes = DEFAULT_SEGMENT_BYTES;

		private long mappingStepBytes = DEFAULT_MAPPING_STEP_BYTES;

		private LongSupplier ticker = System::nanoTime;

		private Builder(String name) {
			if (name == null || name.isBlank()) {
				throw new IllegalArgumentException("pool name must not be blank");
			}
			this.name = name;
			preset(PoolPreset.DEFAULT);
		}

		/** Replaces the ladder, warm-up, caps and byte cap with a preset's. */
		public Builder preset(PoolPreset preset) {
			this.warm.clear();
			this.maxCachedBuffers.clear();
			preset.applyTo(this);
			return this;
		}

		/** Replaces the ladder; warm-up and caps of classes no longer in it are dropped. */
		public Builder sizeClasses(SizeClassLadder ladder) {
			this.sizeClasses = Objects.requireNonNull(ladder, "size classes");
			this.warm.keySet().removeIf(size -> ladder.exactIndexOf(size) < 0);
			this.maxCachedBuffers.keySet().removeIf(size -> ladder.exactIndexOf(size) < 0);
			return this;
		}

		public Builder sizeClasses(long... sizes) {
			return sizeClasses(SizeClassLadder.of(sizes));
		}

		/** Allocates {@code count} buffers of the class of {@code classSize} bytes at start. */
		public Builder warm(long classSize, int count) {
			if (count < 0) {
				throw new InvalidSettingException("warm[" + ByteSizes.exact(classSize) + "]", count,
						"must not be negative");
			}
			this.warm.put(classSize, count);
			return this;
		}

		/** Caches at most {@code count} buffers of the class of {@code classSize} bytes. */
		public Builder maxCachedBuffers(long classSize, int count) {
			if (count < 0) {
				throw new InvalidSettingException("max-cached-buffers[" + ByteSizes.exact(classSize) + "]", count,
						"must not be negative");
			}
			this.maxCachedBuffers.put(classSize, count);
			return this;
		}

		/** Caches at most this many bytes in all classes together. */
		public Builder maxCachedBytes(long bytes) {
			if (bytes < 0) {
				throw new InvalidSettingException("max-cached", bytes, "must not be negative");
			}
			this.maxCachedBytes = bytes;
			return this;
		}

		/** Releases cached buffers unused for this long; {@code null} or zero turns idle trimming off. */
		public Builder idleTrimAfter(Duration idleTime) {
			if (idleTime != null && idleTime.isNegative()) {
				throw new InvalidSettingException("idle-trim-after", idleTime, "must not be negative (0 turns it off)");
			}
			this.idleTrimAfter = (idleTime == null || idleTime.isZero()) ? null : idleTime;
			return this;
		}

		/**
		 * How often an allocation the allocator refuses is retried after memory is freed, 3 by default: the
		 * pool's listeners (the pressure handler) decide what each retry frees.
		 */
		public Builder oomRetries(int retries) {
			if (retries < 0) {
				throw new InvalidSettingException("oom-retries", retries, "must not be negative");
			}
			this.oomRetries = retries;
			return this;
		}

		/**
		 * How long an acquire the allocator refuses, after its retries, waits in line for memory to be
		 * returned before it fails; zero (the default) fails at once.
		 */
		public Builder maxWait(Duration maxWait) {
			if (maxWait == null || maxWait.isNegative()) {
				throw new InvalidSettingException("max-wait", maxWait, "must be zero or more");
			}
			this.maxWait = maxWait;
			return this;
		}

		/**
		 * Whether a waiting acquire is told to give way where every thread holding memory of the pool waits for
		 * more (true by default); without, such threads wait out {@code max-wait}.
		 */
		public Builder giveWay(boolean giveWay) {
			this.giveWay = giveWay;
			return this;
		}

		public Builder leakDetection(LeakDetection level) {
			this.leakDetection = Objects.requireNonNull(level, "leak detection");
			return this;
		}

		/** What an acquire, or a use of a lent buffer, does while the pool sleeps, as {@link PoolConfig#sleepOnAcquire()} says. */
		public Builder sleepOnAcquire(SleepOnAcquire onAcquire) {
			this.sleepOnAcquire = Objects.requireNonNull(onAcquire, "sleep on-acquire");
			return this;
		}

		public Builder history(HistoryConfig history) {
			this.history = Objects.requireNonNull(history, "history");
			return this;
		}

		/**
		 * The step in which the pool allocates segments, as {@link PoolConfig#segmentBytes()} says; 2 MiB by
		 * default, as PyTorch's caching allocator. {@value Arena#ALIGNMENT} makes each block a segment of its own.
		 */
		public Builder segmentSize(long bytes) {
			if (bytes <= 0 || bytes % Arena.ALIGNMENT != 0) {
				throw new InvalidSettingException("segment-size", bytes,
						"must be a positive multiple of " + Arena.ALIGNMENT + " B");
			}
			this.segmentBytes = bytes;
			return this;
		}

		/**
		 * The step in which expandable segments map memory for the blocks the free lists do not keep, as
		 * {@link PoolConfig#mappingStepBytes()} says; 4 MiB by default. A step of one granule maps each on its own.
		 */
		public Builder mappingStep(long bytes) {
			if (bytes <= 0) {
				throw new InvalidSettingException("mapping-step", bytes, "must be positive");
			}
			this.mappingStepBytes = bytes;
			return this;
		}

		/** Number of free-list stripes, rounded up to a power of two; by default twice the processors. */
		public Builder stripes(int stripes) {
			if (stripes <= 0 || stripes > (1 << 16)) {
				throw new InvalidSettingException("stripes", stripes, "must lie in [1, 65536]");
			}
			this.stripes = (stripes == 1) ? 1 : Integer.highestOneBit(stripes - 1) << 1;
			return this;
		}

		/**
		 * The nanosecond clock idle trimming reads, {@link System#nanoTime()} by default: a test that moves it on
		 * by hand decides what has been idle for how long, whatever the machine's speed.
		 */
		public Builder ticker(LongSupplier ticker) {
			this.ticker = Objects.requireNonNull(ticker, "ticker");
			return this;
		}

		public PoolConfig build() {
			return new PoolConfig(this);
		}

		private static int defaultStripes() {
			int wanted = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());
			return Integer.highestOneBit(wanted - 1) << 1;
		}

	}

}
