package io.gpumem.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

import io.gpumem.backend.BackendType;
import io.gpumem.pool.LeakDetection;
import io.gpumem.pool.SleepOnAcquire;
import io.gpumem.pool.PoolPreset;
import io.gpumem.pool.diagnostics.BufferRecording;

/**
 * Configuration of gpumem: the backend, the pools, the reduction cache, the pressure handler and leak
 * detection. Each value is checked once, by the core type it configures, as its bean is built: a value
 * refused stops startup with a failure analysis naming the property, its value, where it was set and the
 * rule. A {@code gpumem.*} key it does not know (a typo) stops startup too.
 */
@ConfigurationProperties(prefix = "gpumem", ignoreUnknownFields = false)
public class GpumemProperties {

	/** Whether to create gpumem's beans at all. */
	private boolean enabled = true;

	/**
	 * Which backend to use: 'auto' takes CUDA when a usable device is found and the host backend otherwise,
	 * 'cuda' fails startup without a usable device, 'host' emulates a device in host memory.
	 */
	private BackendType backend = BackendType.AUTO;

	/** The CUDA device ordinal, when gpumem manages one device. */
	private int device;

	/**
	 * The devices gpumem manages, 'all' the backend has or a list of ordinals, each with its own budget, pools,
	 * reduction cache and pressure handler: the first is the primary, whose beans keep their names, and the
	 * others' pools are named 'device<ordinal>.device' and so on. Unset, 'gpumem.device' alone.
	 */
	private List<String> devices;

	private final Host host = new Host();

	/**
	 * The largest fraction of the device's limit this service may hold, in (0, 1]: of the card's memory, or of the
	 * share GPU sharing gives the process (MPS, HAMi, the cgroup's dmem.max, a scheduler's share).
	 */
	private double memoryFraction = 0.9;

	private final DevicePool devicePool = new DevicePool();

	private final PinnedPool pinnedPool = new PinnedPool();

	private final UnifiedPool unifiedPool = new UnifiedPool();

	private final ReductionCache reductionCache = new ReductionCache();

	private final Pressure pressure = new Pressure();

	private final Admission admission = new Admission();

	private final FaultInjection faultInjection = new FaultInjection();

	private final History history = new History();

	/**
	 * How buffers that become unreachable without being closed are found: disabled, simple (every buffer
	 * of 64KB or more, and of smaller blocks the first lend and one in 128, watched, reclaimed and reported)
	 * or paranoid (every buffer, with where it was acquired).
	 */
	private LeakDetection leakDetection = LeakDetection.SIMPLE;

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public BackendType getBackend() {
		return this.backend;
	}

	public void setBackend(BackendType backend) {
		this.backend = backend;
	}

	public int getDevice() {
		return this.device;
	}

	public void setDevice(int device) {
		this.device = device;
	}

	public List<String> getDevices() {
		return this.devices;
	}

	public void setDevices(List<String> devices) {
		this.devices = devices;
	}

	public Host getHost() {
		return this.host;
	}

	public double getMemoryFraction() {
		return this.memoryFraction;
	}

	public void setMemoryFraction(double memoryFraction) {
		this.memoryFraction = memoryFraction;
	}

	public DevicePool getDevicePool() {
		return this.devicePool;
	}

	public PinnedPool getPinnedPool() {
		return this.pinnedPool;
	}

	public UnifiedPool getUnifiedPool() {
		return this.unifiedPool;
	}

	public ReductionCache getReductionCache() {
		return this.reductionCache;
	}

	public Pressure getPressure() {
		return this.pressure;
	}

	public Admission getAdmission() {
		return this.admission;
	}

	public FaultInjection getFaultInjection() {
		return this.faultInjection;
	}

	public History getHistory() {
		return this.history;
	}

	public LeakDetection getLeakDetection() {
		return this.leakDetection;
	}

	public void setLeakDetection(LeakDetection leakDetection) {
		this.leakDetection = leakDetection;
	}

	/** The host backend, used when no CUDA device is (or is to be) used. */
	public static class Host {

		/** The capacity of the device the host backend emulates. */
		private DataSize capacity = DataSize.ofGigabytes(4);

		/** The capacity of the pinned memory of the host backend's device; unset, its capacity. */
		private DataSize pinnedCapacity;

		/**
		 * How many devices the host backend emulates, each with the capacity and pinned capacity set here; at
		 * least as many as 'gpumem.devices' lists.
		 */
		private int devices = 1;

		public int getDevices() {
			return this.devices;
		}

		public void setDevices(int devices) {
			this.devices = devices;
		}

		public DataSize getCapacity() {
			return this.capacity;
		}

		public void setCapacity(DataSize capacity) {
			this.capacity = capacity;
		}

		public DataSize getPinnedCapacity() {
			return this.pinnedCapacity;
		}

		public void setPinnedCapacity(DataSize pinnedCapacity) {
			this.pinnedCapacity = pinnedCapacity;
		}

	}

	/** What every pool is configured with. */
	public abstract static class Pool {

		/**
		 * The pool's size classes, smallest first; empty, its preset's ladder (the device pool's
		 * 'gpumem.device-pool.preset', the default preset for the other pools).
		 */
		private List<DataSize> sizeClasses = new ArrayList<>();

		/** Buffers allocated into the pool at startup, per size class; empty, as its preset says. */
		private Map<DataSize, Integer> warm = new LinkedHashMap<>();

		/**
		 * The most buffers cached (free) per size class up to 64 KiB, larger ones being bounded by max-cached only;
		 * empty, as its preset says.
		 */
		private Map<DataSize, Integer> maxCachedBuffers = new LinkedHashMap<>();

		/** The most bytes cached (free) in all classes together; unset, as its preset says. */
		private DataSize maxCached;

		/** How long a cached buffer may stay unused before it is released; 0 for never. */
		private Duration idleTrimAfter = Duration.ZERO;

		/**
		 * How long an acquire that finds no memory, even after the out-of-memory retries, waits in line for
		 * buffers to be returned before it fails; 0 fails at once.
		 */
		private Duration maxWait = Duration.ZERO;

		/**
		 * The step, a multiple of 256 B, in which the pool allocates fixed segments to cut its blocks from (an
		 * expandable arena maps granules instead): a request of up to half of it shares a segment of this size,
		 * a larger one gets a segment rounded up to whole steps, and 256 B gives every block a segment of its own.
		 */
		private DataSize segmentSize = DataSize.ofMegabytes(2);

		/**
		 * The step in which expandable segments map memory for blocks above 64 KiB, rounded down to the device's
		 * granules (one at least): a request that maps a granule maps the rest of its step with the same driver
		 * calls, or only its own granules where the device refuses the step; a trim gives a step back only whole.
		 * 2MB maps each granule on its own; PyTorch's large pool maps 20MB pages.
		 */
		private DataSize mappingStep = DataSize.ofMegabytes(4);

		private final Sleep sleep = new Sleep();

		public List<DataSize> getSizeClasses() {
			return this.sizeClasses;
		}

		public void setSizeClasses(List<DataSize> sizeClasses) {
			this.sizeClasses = sizeClasses;
		}

		public Map<DataSize, Integer> getWarm() {
			return this.warm;
		}

		public void setWarm(Map<DataSize, Integer> warm) {
			this.warm = warm;
		}

		public Map<DataSize, Integer> getMaxCachedBuffers() {
			return this.maxCachedBuffers;
		}

		public void setMaxCachedBuffers(Map<DataSize, Integer> maxCachedBuffers) {
			this.maxCachedBuffers = maxCachedBuffers;
		}

		public DataSize getMaxCached() {
			return this.maxCached;
		}

		public void setMaxCached(DataSize maxCached) {
			this.maxCached = maxCached;
		}

		public Duration getIdleTrimAfter() {
			return this.idleTrimAfter;
		}

		public void setIdleTrimAfter(Duration idleTrimAfter) {
			this.idleTrimAfter = idleTrimAfter;
		}

		public Duration getMaxWait() {
			return this.maxWait;
		}

		public void setMaxWait(Duration maxWait) {
			this.maxWait = maxWait;
		}

		public DataSize getSegmentSize() {
			return this.segmentSize;
		}

		public void setSegmentSize(DataSize segmentSize) {
			this.segmentSize = segmentSize;
		}

		public DataSize getMappingStep() {
			return this.mappingStep;
		}

		public void setMappingStep(DataSize mappingStep) {
			this.mappingStep = mappingStep;
		}

		public Sleep getSleep() {
			return this.sleep;
		}

	}

	/** What a pool does while it sleeps ({@code POST /actuator/gpumem/{pool}/sleep}). */
	public static class Sleep {

		/**
		 * What an acquire, or a use of a lent buffer, does while the pool sleeps: wake (the pool wakes first) or
		 * refuse (it fails at once, until the pool is woken).
		 */
		private SleepOnAcquire onAcquire = SleepOnAcquire.WAKE;

		public SleepOnAcquire getOnAcquire() {
			return this.onAcquire;
		}

		public void setOnAcquire(SleepOnAcquire onAcquire) {
			this.onAcquire = onAcquire;
		}

	}

	/** The pool of device memory. */
	public static class DevicePool extends Pool {

		/** The preset giving size classes, warm-up and caps: default, graph-analytics or simulation. */
		private PoolPreset preset = PoolPreset.DEFAULT;

		/**
		 * Where the pool's memory comes from: arena (gpumem cuts and coalesces blocks in segments, as the segments
		 * property says) or cuda-async (CUDA's stream-ordered pool, a block of it per buffer).
		 */
		private DeviceAllocator allocator = DeviceAllocator.ARENA;

		/**
		 * The arena's segments: auto (expandable where the device maps memory into reserved address ranges, else
		 * fixed, saying why in one line), expandable (stops startup where the device cannot), or fixed (allocations
		 * of segment-size, given back only whole).
		 */
		private Segments segments = Segments.AUTO;

		/**
		 * How long the pool may see no buffer acquired or closed before it sleeps, offloading its lent buffers' bytes
		 * to host memory (as POST /actuator/gpumem/device/sleep does); 0 for never. Only for a service whose kernels
		 * never run that long on a buffer without acquiring or closing one.
		 */
		private Duration sleepAfterIdle = Duration.ZERO;

		public PoolPreset getPreset() {
			return this.preset;
		}

		public void setPreset(PoolPreset preset) {
			this.preset = preset;
		}

		public DeviceAllocator getAllocator() {
			return this.allocator;
		}

		public void setAllocator(DeviceAllocator allocator) {
			this.allocator = allocator;
		}

		public Segments getSegments() {
			return this.segments;
		}

		public void setSegments(Segments segments) {
			this.segments = segments;
		}

		public Duration getSleepAfterIdle() {
			return this.sleepAfterIdle;
		}

		public void setSleepAfterIdle(Duration sleepAfterIdle) {
			this.sleepAfterIdle = sleepAfterIdle;
		}

	}

	/** The pool of pinned host memory that transfers are staged in. */
	public static class PinnedPool extends Pool {

		/** Whether to create the pinned pool (and the transfers and reduction cache that need it). */
		private boolean enabled = true;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

	}

	/** The pool of unified (managed) memory. */
	public static class UnifiedPool extends Pool {

		/** Whether to create the unified pool. */
		private boolean enabled;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

	}

	/** The cache of reduction buffers. */
	public static class ReductionCache {

		/** Whether to create the reduction cache. */
		private boolean enabled = true;

		/** The most buffers cached per (element type, slot count, op). */
		private int maxBuffersPerKey = 4;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public int getMaxBuffersPerKey() {
			return this.maxBuffersPerKey;
		}

		public void setMaxBuffersPerKey(int maxBuffersPerKey) {
			this.maxBuffersPerKey = maxBuffersPerKey;
		}

	}

	/** The pressure handler. */
	public static class Pressure {

		/** Whether to watch memory pressure. */
		private boolean enabled = true;

		/** How often utilization is checked (it is also checked after every miss that grows a pool). */
		private Duration checkInterval = Duration.ofSeconds(1);

		private final Thresholds thresholds = new Thresholds();

		private final Hysteresis hysteresis = new Hysteresis();

		private final Reactions reactions = new Reactions();

		/** The utilization a shrink reaction trims cached memory down to, in (0, 1]. */
		private double shrinkTarget = 0.7;

		/**
		 * How many times a refused allocation is retried after freeing memory, before failing: 3 lets each
		 * step of the out-of-memory chain run (the refusing pool, the other pools, everything).
		 */
		private int oomRetries = 3;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getCheckInterval() {
			return this.checkInterval;
		}

		public void setCheckInterval(Duration checkInterval) {
			this.checkInterval = checkInterval;
		}

		public Thresholds getThresholds() {
			return this.thresholds;
		}

		public Hysteresis getHysteresis() {
			return this.hysteresis;
		}

		public Reactions getReactions() {
			return this.reactions;
		}

		public double getShrinkTarget() {
			return this.shrinkTarget;
		}

		public void setShrinkTarget(double shrinkTarget) {
			this.shrinkTarget = shrinkTarget;
		}

		public int getOomRetries() {
			return this.oomRetries;
		}

		public void setOomRetries(int oomRetries) {
			this.oomRetries = oomRetries;
		}

	}

	/** Admission of GPU work: how much of it the device runs at once, and how long the rest waits. */
	public static class Admission {

		/** The most pieces of GPU work (requests holding a permit) running at once; 0 for no limit. */
		private int maxConcurrent;

		/** How long work waits in line for a permit and its bytes, in order of arrival, before it is turned away. */
		private Duration maxWait = Duration.ofSeconds(1);

		public int getMaxConcurrent() {
			return this.maxConcurrent;
		}

		public void setMaxConcurrent(int maxConcurrent) {
			this.maxConcurrent = maxConcurrent;
		}

		public Duration getMaxWait() {
			return this.maxWait;
		}

		public void setMaxWait(Duration maxWait) {
			this.maxWait = maxWait;
		}

	}

	/** What the pools record of their use, for finding who holds memory when it runs out. */
	public static class History {

		/**
		 * Which buffers the history records, their acquire and close with where they were acquired (a few frames),
		 * so that an out-of-memory failure and the snapshot name the code holding them: large (1MB or more, the
		 * frames of a sample of them, one per sixteenth of the device acquired, from 16MB to 1GB), all (every
		 * buffer with its frames, for a log to replay) or off.
		 */
		private BufferRecording buffers = BufferRecording.LARGE;

		/**
		 * How many events each pool's history keeps, the most recent: recorded buffers acquired and closed,
		 * segments allocated and released, trims, out-of-memory failures; 0 keeps none.
		 */
		private int events = 4096;

		/**
		 * A directory to write a JSON report of every out-of-memory failure to (the failure, its largest holders
		 * and the pool's statistics), its path logged at WARN; unset, none is written.
		 */
		private Path oomDumpDir;

		public BufferRecording getBuffers() {
			return this.buffers;
		}

		public void setBuffers(BufferRecording buffers) {
			this.buffers = buffers;
		}

		public int getEvents() {
			return this.events;
		}

		public void setEvents(int events) {
			this.events = events;
		}

		public Path getOomDumpDir() {
			return this.oomDumpDir;
		}

		public void setOomDumpDir(Path oomDumpDir) {
			this.oomDumpDir = oomDumpDir;
		}

	}

	/**
	 * For tests: allocations refused on purpose, as the device refuses them when memory runs out, so that a
	 * test drives the application's out-of-memory paths, and a device fault, so that a test drives what a
	 * device failing for good does. Off unless every-nth, probability or device-fault-after is set.
	 */
	public static class FaultInjection {

		/**
		 * Makes the primary device fail for good at its acquire after this many, as a kernel writing out of
		 * bounds does (CUDA_ERROR_ILLEGAL_ADDRESS): to rehearse health, liveness and alerts. Unset, never.
		 */
		private Long deviceFaultAfter;

		/** Refuses allocations number n, 2n, 3n, ... of each pool named; unset, none by count. */
		private Long everyNth;

		/** Refuses each allocation of the pools named with this probability, in [0, 1]; unset, none by chance. */
		private Double probability;

		/** The seed of the draws when a probability is set, so that a failing test runs the same again. */
		private long seed = 1;

		/** Which pools' allocations are refused; empty, every pool that allocates. */
		private List<PoolName> pools = new ArrayList<>();

		public Long getDeviceFaultAfter() {
			return this.deviceFaultAfter;
		}

		public void setDeviceFaultAfter(Long deviceFaultAfter) {
			this.deviceFaultAfter = deviceFaultAfter;
		}

		public Long getEveryNth() {
			return this.everyNth;
		}

		public void setEveryNth(Long everyNth) {
			this.everyNth = everyNth;
		}

		public Double getProbability() {
			return this.probability;
		}

		public void setProbability(Double probability) {
			this.probability = probability;
		}

		public long getSeed() {
			return this.seed;
		}

		public void setSeed(long seed) {
			this.seed = seed;
		}

		public List<PoolName> getPools() {
			return this.pools;
		}

		public void setPools(List<PoolName> pools) {
			this.pools = pools;
		}

	}

	/** The utilizations at which pressure becomes elevated, warning and critical. */
	public static class Thresholds {

		/** The utilization from which pressure is ELEVATED. */
		private double elevated = 0.6;

		/** The utilization from which pressure is WARNING. */
		private double warning = 0.75;

		/** The utilization from which pressure is CRITICAL (and health OUT_OF_SERVICE). */
		private double critical = 0.9;

		public double getElevated() {
			return this.elevated;
		}

		public void setElevated(double elevated) {
			this.elevated = elevated;
		}

		public double getWarning() {
			return this.warning;
		}

		public void setWarning(double warning) {
			this.warning = warning;
		}

		public double getCritical() {
			return this.critical;
		}

		public void setCritical(double critical) {
			this.critical = critical;
		}

	}

	/**
	 * How a pressure level is kept from flapping: entered at its threshold, left once utilization stayed below it by
	 * a margin for a minimum time; OUT_OF_MEMORY, entered when an allocation fails for good, is left once that time
	 * passed without another failure.
	 */
	public static class Hysteresis {

		/**
		 * How far below a level's threshold utilization must fall to leave the level, in [0, 1); wider than a
		 * threshold's distance to the shrink target, so that a shrink does not by itself end its level.
		 */
		private double margin = 0.1;

		/**
		 * How long utilization must stay below a level's threshold by the margin to leave the level, and how long
		 * OUT_OF_MEMORY lasts after its last failure.
		 */
		private Duration minDuration = Duration.ofSeconds(10);

		public double getMargin() {
			return this.margin;
		}

		public void setMargin(double margin) {
			this.margin = margin;
		}

		public Duration getMinDuration() {
			return this.minDuration;
		}

		public void setMinDuration(Duration minDuration) {
			this.minDuration = minDuration;
		}

	}

	/** What the pressure handler does at each level: none, shrink or callback. */
	public static class Reactions {

		/** The reaction at ELEVATED. */
		private Reaction elevated = Reaction.NONE;

		/** The reaction at WARNING. */
		private Reaction warning = Reaction.SHRINK;

		/** The reaction at CRITICAL. */
		private Reaction critical = Reaction.SHRINK;

		public Reaction getElevated() {
			return this.elevated;
		}

		public void setElevated(Reaction elevated) {
			this.elevated = elevated;
		}

		public Reaction getWarning() {
			return this.warning;
		}

		public void setWarning(Reaction warning) {
			this.warning = warning;
		}

		public Reaction getCritical() {
			return this.critical;
		}

		public void setCritical(Reaction critical) {
			this.critical = critical;
		}

	}

	/** Where the device pool's memory comes from. */
	public enum DeviceAllocator {

		/** Segments of {@code cuMemAlloc}, cut into blocks and coalesced by gpumem. */
		ARENA,

		/**
		 * CUDA's stream-ordered pool ({@code cuMemAllocFromPoolAsync}), a block of it per buffer, ordered on the
		 * request's stream where one is bound; emulated on the host backend.
		 */
		CUDA_ASYNC

	}

	/** What the device pool's arena cuts its blocks from. */
	public enum Segments {

		/** Expandable where the device supports it, fixed otherwise. */
		AUTO,

		/**
		 * One reserved address range, growing at its end a granule at a time, whose free granules go back wherever
		 * they lie: CUDA's virtual memory management, emulated on the host backend.
		 */
		EXPANDABLE,

		/** Allocations of {@code segment-size}, given back only whole. */
		FIXED

	}

	/** A reaction to a pressure level. */
	public enum Reaction {

		/** Do nothing. */
		NONE,

		/** Trim cached memory down to the shrink target. */
		SHRINK,

		/** Call the {@code PressureListener} beans registered as callbacks. */
		CALLBACK

	}

}
