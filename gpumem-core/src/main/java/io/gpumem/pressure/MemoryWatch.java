package io.gpumem.pressure;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

import io.gpumem.memory.MemoryInfo;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pressure.PressureHandler.Memory;

/**
 * One memory a {@link PressureHandler} watches: where its info comes from, its level and utilization as the
 * last check or refusal left them, since when, what the current out-of-memory episode saw, its pools, and how their cached memory is freed, to a target utilization
 * (SHRINK) or step by step for a refused allocation (the out-of-memory chain).
 */
final class MemoryWatch {

	/** Frees cached memory of a watch's pools for a request of {@code bytes} that {@code refusing} could not serve. */
	@FunctionalInterface
	private interface Step {

		long free(MemoryWatch watch, MemoryPool refusing, long bytes);

	}

	/**
	 * The out-of-memory chain, a step per retry of the refusing pool: what the request needs from the refusing
	 * pool's cache, about as much from the other pools', largest cache first, then every cache entirely.
	 */
	private static final List<Step> OUT_OF_MEMORY_CHAIN = List.of(
			(watch, refusing, bytes) -> refusing.trim(Math.max(0, refusing.cachedBytes() - bytes)),
			(watch, refusing, bytes) -> watch.trimLargestFirst(bytes, refusing),
			(watch, refusing, bytes) -> watch.trimAll(refusing));

	final Memory memory;

	private final Supplier<MemoryInfo> info;

	private final List<MemoryPool> pools = new CopyOnWriteArrayList<>();

	volatile PressureLevel level = PressureLevel.NORMAL;

	volatile double utilization = -1;

	/** When the level was entered, on the handler's clock. */
	long since;

	/** Since when utilization has stayed below the level's threshold by the margin, at every check; -1 where not. */
	long calmSince = -1;

	/** When the last allocation failed for good, on the handler's clock. */
	long lastFailure;

	/** What happened since OUT_OF_MEMORY was last entered: refusals, the bytes freed for them, failures. */
	long episodeRefusals, episodeFreedBytes, episodeFailures;

	MemoryWatch(Memory memory, Supplier<MemoryInfo> info) {
		this.memory = memory;
		this.info = info;
	}

	void add(MemoryPool pool) {
		this.pools.add(pool);
	}

	/**
	 * How long the memory has been calm at {@code now}: at OUT_OF_MEMORY, since the last failure; at another level,
	 * since utilization fell below its threshold by the margin ({@code below} says whether it is now) and stayed
	 * there; -1 where it is not calm.
	 */
	long calm(long now, boolean below) {
		if (this.level == PressureLevel.OUT_OF_MEMORY) {
			return now - this.lastFailure;
		}
		if (!below) {
			this.calmSince = -1;
			return -1;
		}
		if (this.calmSince < 0) {
			this.calmSince = now;
		}
		return now - this.calmSince;
	}

	/** The memory's info now, or {@code null} without a source. */
	MemoryInfo read() {
		return (this.info != null) ? this.info.get() : null;
	}

	/**
	 * Frees memory for retry {@code attempt} (from 0) of a request of {@code bytes} that {@code refusing}
	 * could not serve: that attempt's step of the chain, the next ones where a step frees nothing.
	 * @return the bytes freed
	 */
	long freeFor(MemoryPool refusing, long bytes, int attempt) {
		long freed = 0;
		for (int step = Math.min(attempt, OUT_OF_MEMORY_CHAIN.size() - 1); freed == 0
				&& step < OUT_OF_MEMORY_CHAIN.size(); step++) {
			freed = OUT_OF_MEMORY_CHAIN.get(step).free(this, refusing, bytes);
		}
		return freed;
	}

	/**
	 * Trims the pools, largest cache first, until utilization is at most {@code target} or nothing is cached.
	 * @return the bytes trimmed
	 */
	long shrink(double target, MemoryInfo before) {
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
			memory = read();
		}
		return trimmed;
	}

	/** Trims about {@code bytes} from the pools but {@code except}, largest cache first. */
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
				released += trimOpen(pool, Math.max(0, cached - (bytes - released)));
			}
		}
		return released;
	}

	private long trimAll(MemoryPool refusing) {
		long freed = this.pools.contains(refusing) ? 0 : refusing.trim(0);
		for (MemoryPool each : this.pools) {
			freed += trimOpen(each, 0);
		}
		return freed;
	}

	/**
	 * Trims {@code pool} down to {@code keepBytes}; nothing where it was closed, as a registered pool may be before or
	 * during the trim, for another pool's refusal is not to fail with its close.
	 */
	private static long trimOpen(MemoryPool pool, long keepBytes) {
		if (pool.isClosed()) {
			return 0;
		}
		try {
			return pool.trim(keepBytes);
		}
		catch (IllegalStateException ex) {
			if (pool.isClosed()) {
				return 0;
			}
			throw ex;
		}
	}

}
