package io.gpumem.pressure;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

import io.gpumem.memory.MemoryInfo;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pool.PoolListener;
import io.gpumem.pool.StratifiedMemoryPool;

/**
 * Watches the device's utilization and reacts as configured per level: nothing, shrinking the pools'
 * caches to a target utilization, or calling back.
 * <p>
 * A check reads the device's memory info, maps utilization to a {@link PressureLevel} through the
 * thresholds, tells listeners of a change of level once, calls the callbacks on entering a level whose
 * reaction is CALLBACK, and applies a SHRINK reaction while utilization is above its target. Checks run
 * on a schedule ({@link #start(Duration)}) and right after a registered pool's miss grew its reserved
 * memory. When an allocator refuses a registered pool, the handler is the first link of the
 * out-of-memory chain: the level becomes OUT_OF_MEMORY (listeners are told), cached memory is trimmed
 * (first the refusing pool's, then the others', then everything), and the pool retries, up to its
 * {@code oomRetries}, before throwing. Every step is counted in {@link #statistics()}.
 */
public final class PressureHandler implements PoolListener, AutoCloseable {

	private static final Logger LOGGER = System.getLogger(PressureHandler.class.getName());

	private final Supplier<MemoryInfo> memoryInfo;

	private final PressureThresholds thresholds;

	private final Map<PressureLevel, PressureReaction> reactions;

	private final List<MemoryPool> pools = new CopyOnWriteArrayList<>();

	private final List<PressureListener> listeners = new CopyOnWriteArrayList<>();

	private final List<PressureListener> callbacks = new CopyOnWriteArrayList<>();

	private final ReentrantLock checking = new ReentrantLock();

	private final AtomicLong checks = new AtomicLong();

	private final AtomicLong levelChanges = new AtomicLong();

	private final AtomicLong shrinks = new AtomicLong();

	private final AtomicLong shrunkBytes = new AtomicLong();

	private final AtomicLong callbackCalls = new AtomicLong();

	private final AtomicLong outOfMemoryRefusals = new AtomicLong();

	private final AtomicLong outOfMemoryFreedBytes = new AtomicLong();

	private final AtomicLong outOfMemoryFailures = new AtomicLong();

	private volatile PressureLevel level = PressureLevel.NORMAL;

	private volatile double utilization;

	private ScheduledExecutorService scheduler;

	private ScheduledFuture<?> schedule;

	private PressureHandler(Builder builder) {
		this.memoryInfo = builder.memoryInfo;
		this.thresholds = builder.thresholds;
		this.reactions = new EnumMap<>(builder.reactions);
	}

	/** A handler reading the device's memory from {@code memoryInfo}, such as {@code backend::memoryInfo}. */
	public static Builder builder(Supplier<MemoryInfo> memoryInfo) {
		return new Builder(memoryInfo);
	}

	/** Adds a pool to shrink; a {@link StratifiedMemoryPool} also reports growth and refusals to this handler. */
	public void register(MemoryPool pool) {
		this.pools.add(Objects.requireNonNull(pool, "pool"));
		if (pool instanceof StratifiedMemoryPool stratified) {
			stratified.addListener(this);
		}
	}

	/** Adds a listener told of every change of level, once per change. */
	public void addListener(PressureListener listener) {
		this.listeners.add(Objects.requireNonNull(listener, "listener"));
	}

	/** Adds a callback called on entering a level whose reaction is CALLBACK. */
	public void addCallback(PressureListener callback) {
		this.callbacks.add(Objects.requireNonNull(callback, "callback"));
	}

	/** The configured thresholds. */
	public PressureThresholds thresholds() {
		return this.thresholds;
	}

	/** The reaction at a level. */
	public PressureReaction reaction(PressureLevel level) {
		return this.reactions.getOrDefault(level, PressureReaction.none());
	}

	/** The level at the last check. */
	public PressureLevel level() {
		return this.level;
	}

	/** Reads utilization, tells of a change of level, and applies the level's reaction. */
	public PressureLevel check() {
		this.checking.lock();
		try {
			return checkLocked();
		}
		finally {
			this.checking.unlock();
		}
	}

	/** Checks every {@code interval} on a daemon thread of the handler's own, until {@link #close()}. */
	public synchronized void start(Duration interval) {
		if (interval.isZero() || interval.isNegative()) {
			throw new IllegalArgumentException("pressure check interval must be positive: " + interval);
		}
		if (this.scheduler != null) {
			throw new IllegalStateException("pressure handler already started");
		}
		this.scheduler = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "gpumem-pressure");
			thread.setDaemon(true);
			return thread;
		});
		long nanos = interval.toNanos();
		this.schedule = this.scheduler.scheduleWithFixedDelay(this::scheduledCheck, nanos, nanos, TimeUnit.NANOSECONDS);
	}

	/** A snapshot of the handler's level and counters. */
	public PressureStatistics statistics() {
		return new PressureStatistics(this.level, this.utilization, this.checks.get(), this.levelChanges.get(),
				this.shrinks.get(), this.shrunkBytes.get(), this.callbackCalls.get(), this.outOfMemoryRefusals.get(),
				this.outOfMemoryFreedBytes.get(), this.outOfMemoryFailures.get());
	}

	/** Stops the scheduled checks. */
	@Override
	public synchronized void close() {
		if (this.scheduler != null) {
			this.schedule.cancel(false);
			this.scheduler.shutdown();
		}
	}

	@Override
	public void reservedMemoryGrew(MemoryPool pool) {
		if (this.checking.tryLock()) {
			try {
				checkLocked();
			}
			finally {
				this.checking.unlock();
			}
		}
	}

	@Override
	public long outOfMemory(MemoryPool pool, long requestedBytes, int attempt) {
		this.outOfMemoryRefusals.incrementAndGet();
		this.checking.lock();
		try {
			MemoryInfo memory = readMemory();
			changeLevel(PressureLevel.OUT_OF_MEMORY, memory);
			long freed;
			if (attempt == 0) {
				long cached = pool.cachedBytes();
				freed = pool.trim(Math.max(0, cached - requestedBytes));
				freed += trimLargestFirst(requestedBytes - freed, pool);
			}
			else {
				freed = 0;
				for (MemoryPool each : this.pools) {
					freed += each.trim(0);
				}
				if (!this.pools.contains(pool)) {
					freed += pool.trim(0);
				}
			}
			this.outOfMemoryFreedBytes.addAndGet(freed);
			return freed;
		}
		finally {
			this.checking.unlock();
		}
	}

	@Override
	public void allocationFailed(MemoryPool pool, long requestedBytes) {
		this.outOfMemoryFailures.incrementAndGet();
	}

	private PressureLevel checkLocked() {
		this.checks.incrementAndGet();
		MemoryInfo memory = readMemory();
		PressureLevel now = this.thresholds.levelOf(memory.utilization());
		changeLevel(now, memory);
		if (reaction(now) instanceof PressureReaction.Shrink shrink) {
			long trimmed = shrink(shrink.targetUtilization(), memory);
			if (trimmed > 0) {
				this.shrinks.incrementAndGet();
				this.shrunkBytes.addAndGet(trimmed);
				memory = readMemory();
				PressureLevel after = this.thresholds.levelOf(memory.utilization());
				changeLevel(after, memory);
				now = after;
			}
		}
		return now;
	}

	/** Trims the pools, largest cache first, until utilization is at most the target or nothing is cached. */
	private long shrink(double target, MemoryInfo before) {
		long trimmed = 0;
		MemoryInfo memory = before;
		for (int pass = 0; pass <= this.pools.size(); pass++) {
			long excess = memory.usedBytes() - (long) Math.floor(target * memory.totalBytes());
			if (excess <= 0) {
				break;
			}
			long released = trimLargestFirst(excess, null);
			if (released == 0) {
				break;
			}
			trimmed += released;
			memory = readMemory();
		}
		return trimmed;
	}

	/** Trims about {@code bytes} from the registered pools but {@code except}, largest cache first. */
	private long trimLargestFirst(long bytes, MemoryPool except) {
		List<MemoryPool> byCache = new ArrayList<>(this.pools);
		byCache.remove(except);
		byCache.sort(Comparator.comparingLong(MemoryPool::cachedBytes).reversed());
		long released = 0;
		for (MemoryPool pool : byCache) {
			if (released >= bytes) {
				break;
			}
			long cached = pool.cachedBytes();
			if (cached > 0) {
				released += pool.trim(Math.max(0, cached - (bytes - released)));
			}
		}
		return released;
	}

	private void changeLevel(PressureLevel now, MemoryInfo memory) {
		PressureLevel previous = this.level;
		this.utilization = memory.utilization();
		if (now == previous) {
			return;
		}
		this.level = now;
		this.levelChanges.incrementAndGet();
		PressureChange change = new PressureChange(previous, now, memory.utilization(), memory);
		LOGGER.log((now.compareTo(PressureLevel.WARNING) >= 0) ? Level.WARNING : Level.INFO,
				"GPU memory pressure {0} -> {1} (utilization {2})", previous, now,
				String.format("%.3f", memory.utilization()));
		this.listeners.forEach((listener) -> notify(listener, change));
		if (reaction(now) == PressureReaction.callback()) {
			for (PressureListener callback : this.callbacks) {
				this.callbackCalls.incrementAndGet();
				notify(callback, change);
			}
		}
	}

	private static void notify(PressureListener listener, PressureChange change) {
		try {
			listener.pressureChanged(change);
		}
		catch (RuntimeException ex) {
			LOGGER.log(Level.WARNING, "A pressure listener failed on " + change, ex);
		}
	}

	private MemoryInfo readMemory() {
		return this.memoryInfo.get();
	}

	private void scheduledCheck() {
		try {
			check();
		}
		catch (RuntimeException ex) {
			LOGGER.log(Level.WARNING, "Scheduled GPU memory pressure check failed", ex);
		}
	}

	/** Builds a {@link PressureHandler}. */
	public static final class Builder {

		private final Supplier<MemoryInfo> memoryInfo;

		private PressureThresholds thresholds = PressureThresholds.DEFAULTS;

		private final Map<PressureLevel, PressureReaction> reactions = new EnumMap<>(PressureLevel.class);

		private Builder(Supplier<MemoryInfo> memoryInfo) {
			this.memoryInfo = Objects.requireNonNull(memoryInfo, "memory info");
			this.reactions.put(PressureLevel.WARNING, PressureReaction.shrink(0.7));
			this.reactions.put(PressureLevel.CRITICAL, PressureReaction.shrink(0.7));
		}

		public Builder thresholds(PressureThresholds thresholds) {
			this.thresholds = Objects.requireNonNull(thresholds, "thresholds");
			return this;
		}

		/**
		 * The reaction at ELEVATED, WARNING or CRITICAL; by default none, shrink(0.7) and shrink(0.7).
		 * @throws IllegalArgumentException for NORMAL or OUT_OF_MEMORY, whose handling is fixed
		 */
		public Builder reaction(PressureLevel level, PressureReaction reaction) {
			if (level == PressureLevel.NORMAL || level == PressureLevel.OUT_OF_MEMORY) {
				throw new IllegalArgumentException("a reaction can be set for ELEVATED, WARNING or CRITICAL, not " + level);
			}
			this.reactions.put(level, Objects.requireNonNull(reaction, "reaction"));
			return this;
		}

		public PressureHandler build() {
			return new PressureHandler(this);
		}

	}

}
