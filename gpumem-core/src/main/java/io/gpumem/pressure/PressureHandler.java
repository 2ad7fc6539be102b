package io.gpumem.pressure;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import io.gpumem.config.InvalidSettingException;
import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.memory.OutOfMemoryDiagnostic;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pool.PoolListener;

/**
 * Watches the utilization of each memory gpumem pools, the device's and the pinned host memory's, and
 * reacts as configured per level: nothing, shrinking the caches of the pools of that memory to a target
 * utilization, or calling back. Device pressure never trims a pinned pool, nor pinned pressure a device
 * pool: each {@link Memory} has its own level, pools and utilization.
 * <p>
 * A check reads each memory's info, maps utilization to a {@link PressureLevel} through the thresholds and the
 * {@link PressureHysteresis}, so that a level lasts while utilization hovers about its threshold, tells listeners
 * of a change of level once, calls the callbacks on entering a level whose reaction is CALLBACK, and applies a
 * SHRINK reaction while utilization is above its target; above the device's protected utilization, where one is set,
 * every check shrinks down to it whatever the level. The level is that of the utilization the check reads:
 * what a shrink frees shows at the next check, so a shrink alone does not end a level that demand brings back.
 * Checks run on a schedule on the handler's own thread ({@link #start(Duration)}), and there too soon after a
 * registered pool's miss grew its reserved memory: the request thread only signals.
 * <p>
 * When an allocator refuses a registered pool, the handler decides what each of the pool's retries frees; a refusal
 * so served changes no level and is counted. An allocation that fails for good, though within the device and the
 * budget, puts that memory at OUT_OF_MEMORY
 * (listeners are told, and it is logged at WARN once, with what the episode saw when it is left), where it stays
 * while failures go on. Each retry takes one more step of
 * the out-of-memory chain: the refusing pool's cache (what the request needs), then the other pools' (largest
 * cache first), then every cache entirely; a step that frees nothing goes on to the next at once, and
 * retries beyond the last step take it again. How many retries there are is the pool's setting alone.
 * Every step is counted in {@link #statistics()}.
 */
public final class PressureHandler implements PoolListener, AutoCloseable {

	private static final Logger LOGGER = System.getLogger(PressureHandler.class.getName());

	private final PressureThresholds thresholds;

	private final PressureHysteresis hysteresis;

	private final LongSupplier ticker;

	private final double protectedUtilization;

	private final Map<PressureLevel, PressureReaction> reactions;

	private final Map<Memory, MemoryWatch> watches = new EnumMap<>(Memory.class);

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

	private final AtomicBoolean checkRequested = new AtomicBoolean();

	private volatile ScheduledExecutorService scheduler;

	private ScheduledFuture<?> schedule;

	private PressureHandler(Builder builder) {
		this.thresholds = builder.thresholds;
		this.hysteresis = builder.hysteresis;
		this.ticker = builder.ticker;
		this.protectedUtilization = builder.protectedUtilization;
		this.reactions = new EnumMap<>(builder.reactions);
		this.watches.put(Memory.DEVICE, new MemoryWatch(Memory.DEVICE, builder.deviceMemory));
		this.watches.put(Memory.PINNED, new MemoryWatch(Memory.PINNED, builder.pinnedMemory));
	}

	/** A handler reading the device's memory from {@code deviceMemory}, such as {@code backend::memoryInfo}. */
	public static Builder builder(Supplier<MemoryInfo> deviceMemory) {
		return new Builder(deviceMemory);
	}

	/**
	 * Adds a pool to shrink under the pressure of its kind's memory, which reports its growth and refusals to
	 * this handler; what is set aside on its shelves is trimmed with it.
	 */
	public void register(MemoryPool pool) {
		watch(Objects.requireNonNull(pool, "pool").kind()).add(pool);
		pool.addListener(this);
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

	/** The configured hysteresis. */
	public PressureHysteresis hysteresis() {
		return this.hysteresis;
	}

	/** The reaction at a level. */
	public PressureReaction reaction(PressureLevel level) {
		return this.reactions.getOrDefault(level, PressureReaction.none());
	}

	/** The device memory's level at the last check or failure: the level of the service's GPU memory. */
	public PressureLevel level() {
		return level(Memory.DEVICE);
	}

	/** A memory's level at the last check or failure. */
	public PressureLevel level(Memory memory) {
		return this.watches.get(memory).level;
	}

	/** A memory's utilization at the last check, or -1 where the handler has no source for it. */
	public double utilization(Memory memory) {
		return this.watches.get(memory).utilization;
	}

	/**
	 * Reads each memory's utilization, tells of a change of level, and applies the level's reaction.
	 * @return the device memory's level
	 */
	public PressureLevel check() {
		this.checking.lock();
		try {
			for (MemoryWatch watch : this.watches.values()) {
				checkLocked(watch);
			}
			return level();
		}
		finally {
			this.checking.unlock();
		}
	}

	/** Checks every {@code interval} on a daemon thread of the handler's own, until {@link #close()}. */
	public synchronized void start(Duration interval) {
		if (interval == null || interval.isZero() || interval.isNegative()) {
			throw new InvalidSettingException("check-interval", interval, "must be positive");
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

	/** A snapshot of the handler's device level and counters. */
	public PressureStatistics statistics() {
		MemoryWatch device = this.watches.get(Memory.DEVICE);
		return new PressureStatistics(device.level, device.utilization, this.checks.get(), this.levelChanges.get(),
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

	/**
	 * Has the handler's thread check soon, once for any number of signals meanwhile; checks at once on
	 * the calling thread where the handler was never started.
	 */
	@Override
	public void reservedMemoryGrew(MemoryPool pool) {
		ScheduledExecutorService thread = this.scheduler;
		if (thread == null) {
			if (this.checking.tryLock()) {
				try {
					checkLocked(watch(pool.kind()));
				}
				finally {
					this.checking.unlock();
				}
			}
		}
		else if (this.checkRequested.compareAndSet(false, true)) {
			try {
				thread.execute(() -> {
					this.checkRequested.set(false);
					scheduledCheck();
				});
			}
			catch (RejectedExecutionException ex) {
				this.checkRequested.set(false);
			}
		}
	}

	/** The step of the out-of-memory chain of {@code pool}'s memory for retry {@code attempt}. */
	@Override
	public long outOfMemory(MemoryPool pool, long requestedBytes, int attempt) {
		this.outOfMemoryRefusals.incrementAndGet();
		MemoryWatch watch = watch(pool.kind());
		this.checking.lock();
		try {
			long freed = watch.freeFor(pool, requestedBytes, attempt);
			watch.episodeRefusals++;
			watch.episodeFreedBytes += freed;
			this.outOfMemoryFreedBytes.addAndGet(freed);
			return freed;
		}
		finally {
			this.checking.unlock();
		}
	}

	@Override
	public void allocationFailed(MemoryPool pool, OutOfMemoryDiagnostic report) {
		this.outOfMemoryFailures.incrementAndGet();
		if (report.exceedsCapacity()) {
			return;
		}
		MemoryWatch watch = watch(pool.kind());
		this.checking.lock();
		try {
			watch.lastFailure = this.ticker.getAsLong();
			if (watch.level != PressureLevel.OUT_OF_MEMORY) {
				watch.episodeRefusals = 0;
				watch.episodeFreedBytes = 0;
				watch.episodeFailures = 0;
				changeLevel(watch, PressureLevel.OUT_OF_MEMORY, watch.read());
			}
			watch.episodeFailures++;
		}
		finally {
			this.checking.unlock();
		}
	}

	private void checkLocked(MemoryWatch watch) {
		MemoryInfo memory = watch.read();
		if (memory == null) {
			return;
		}
		this.checks.incrementAndGet();
		PressureLevel now = levelAt(watch, memory);
		changeLevel(watch, now, memory);
		PressureLevel acting = (now == PressureLevel.OUT_OF_MEMORY) ? this.thresholds.levelOf(memory.utilization())
				: now;
		double target = shrinkTarget(watch, acting, memory);
		if (!Double.isNaN(target)) {
			long trimmed = watch.shrink(target, memory);
			if (trimmed > 0) {
				this.shrinks.incrementAndGet();
				this.shrunkBytes.addAndGet(trimmed);
			}
		}
	}

	/**
	 * The utilization a check shrinks to: the level's SHRINK target, and above the device's protected utilization that
	 * utilization, whatever the level's reaction, the lower of the two; NaN for no shrink.
	 */
	private double shrinkTarget(MemoryWatch watch, PressureLevel acting, MemoryInfo memory) {
		double target = (reaction(acting) instanceof PressureReaction.Shrink shrink) ? shrink.targetUtilization()
				: Double.NaN;
		if (watch.memory == Memory.DEVICE && memory.utilization() > this.protectedUtilization) {
			return Double.isNaN(target) ? this.protectedUtilization : Math.min(target, this.protectedUtilization);
		}
		return target;
	}

	private PressureLevel levelAt(MemoryWatch watch, MemoryInfo memory) {
		double utilization = memory.utilization();
		boolean below = this.hysteresis.lowered(this.thresholds, utilization).compareTo(watch.level) < 0;
		return this.hysteresis.next(this.thresholds, watch.level, utilization,
				watch.calm(this.ticker.getAsLong(), below));
	}

	private void changeLevel(MemoryWatch watch, PressureLevel now, MemoryInfo memory) {
		PressureLevel previous = watch.level;
		double utilization = (memory != null) ? memory.utilization() : -1;
		watch.utilization = utilization;
		if (now == previous) {
			return;
		}
		long at = this.ticker.getAsLong();
		long lasted = at - watch.since;
		watch.level = now;
		watch.since = at;
		watch.calmSince = -1;
		this.levelChanges.incrementAndGet();
		PressureChange change = new PressureChange(watch.memory, previous, now, utilization, memory);
		PressureLevelEvent.record(change);
		String message = String.format("GPU memory pressure (%s memory) %s -> %s (utilization %.3f)", watch.memory,
				previous, now, utilization);
		if (previous == PressureLevel.OUT_OF_MEMORY) {
			LOGGER.log(Level.INFO, String.format("%s after %d s out of memory: %d allocations failed, %d refusals while "
					+ "out of memory, %s freed for them", message, TimeUnit.NANOSECONDS.toSeconds(lasted),
					watch.episodeFailures, watch.episodeRefusals, ByteSizes.format(watch.episodeFreedBytes)));
		}
		else {
			LOGGER.log((now.compareTo(PressureLevel.WARNING) >= 0) ? Level.WARNING : Level.INFO, message);
		}
		this.listeners.forEach((listener) -> notify(listener, change));
		if (reaction(now) == PressureReaction.callback()) {
			for (PressureListener callback : this.callbacks) {
				this.callbackCalls.incrementAndGet();
				notify(callback, change);
			}
		}
	}

	private MemoryWatch watch(MemoryKind kind) {
		return this.watches.get(Memory.of(kind));
	}

	private static void notify(PressureListener listener, PressureChange change) {
		try {
			listener.pressureChanged(change);
		}
		catch (RuntimeException ex) {
			LOGGER.log(Level.WARNING, "A pressure listener failed on " + change, ex);
		}
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

		private final Supplier<MemoryInfo> deviceMemory;

		private Supplier<MemoryInfo> pinnedMemory;

		private PressureThresholds thresholds = PressureThresholds.DEFAULTS;

		private PressureHysteresis hysteresis = PressureHysteresis.DEFAULTS;

		private LongSupplier ticker = System::nanoTime;

		private double protectedUtilization = Double.POSITIVE_INFINITY;

		private final Map<PressureLevel, PressureReaction> reactions = new EnumMap<>(PressureLevel.class);

		private Builder(Supplier<MemoryInfo> deviceMemory) {
			this.deviceMemory = Objects.requireNonNull(deviceMemory, "device memory info");
			this.reactions.put(PressureLevel.WARNING, PressureReaction.shrink(0.7));
			this.reactions.put(PressureLevel.CRITICAL, PressureReaction.shrink(0.7));
		}

		/**
		 * Where the pinned host memory's info comes from, such as the pinned allocator's
		 * {@code memoryInfo}; without one, pinned memory has a level only from failures.
		 */
		public Builder pinnedMemory(Supplier<MemoryInfo> pinnedMemory) {
			this.pinnedMemory = Objects.requireNonNull(pinnedMemory, "pinned memory info");
			return this;
		}

		public Builder thresholds(PressureThresholds thresholds) {
			this.thresholds = Objects.requireNonNull(thresholds, "thresholds");
			return this;
		}

		public Builder hysteresis(PressureHysteresis hysteresis) {
			this.hysteresis = Objects.requireNonNull(hysteresis, "hysteresis");
			return this;
		}

		/**
		 * The device utilization up to which the process's memory is protected from reclaim (the cgroup's
		 * {@code dmem.min}, {@link io.gpumem.limit.DeviceLimit#protectedUtilization()}): above it every check shrinks
		 * the device pools' caches down to it, whatever the level's reaction.
		 * @throws IllegalArgumentException if it is not in (0, 1]
		 */
		public Builder protectedUtilization(double utilization) {
			if (!(utilization > 0 && utilization <= 1)) {
				throw new IllegalArgumentException("a protected utilization lies in (0, 1], not " + utilization);
			}
			this.protectedUtilization = utilization;
			return this;
		}

		/** The clock, in nanoseconds, the hysteresis measures how long a level lasted on; tests set their own. */
		public Builder ticker(LongSupplier ticker) {
			this.ticker = Objects.requireNonNull(ticker, "ticker");
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

	/** The memories the handler watches: the device's, which DEVICE and UNIFIED pools hold, and pinned host memory. */
	public enum Memory {

		/** Device memory, held by DEVICE and UNIFIED pools. */
		DEVICE,

		/** Page-locked host memory, held by PINNED pools. */
		PINNED;

		/** The memory a pool of {@code kind} holds. */
		public static Memory of(MemoryKind kind) {
			return (kind == MemoryKind.PINNED) ? PINNED : DEVICE;
		}

	}

}
