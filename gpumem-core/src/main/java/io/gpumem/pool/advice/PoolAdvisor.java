package io.gpumem.pool.advice;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.TreeSet;

import io.gpumem.pool.MemoryCache;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PoolUsage;
import io.gpumem.pool.SizeClassLadder;
import io.gpumem.pool.SizeHistogram;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.pool.arena.Arena;
import io.gpumem.pool.diagnostics.BufferRecording;
import io.gpumem.pool.diagnostics.PoolHistory;
import java.util.Optional;

/**
 * Replays what a pool recorded (the sizes requested, the use and misses of each class, the peak of its
 * memory) against other settings, and advises the ones that would have done better.
 */
public final class PoolAdvisor {

	/** The most classes the advice adds to a ladder. */
	static final int MAX_ADDED_CLASSES = 8;

	/** The least share of the bytes lent a class must save to be added. */
	static final double MIN_SAVING = 0.005;

	private static final long MIB = 1L << 20;

	/** The capacity a replay for advice runs against: none that a pool reaches. */
	private static final long UNBOUNDED = Long.MAX_VALUE / 2;

	private PoolAdvisor() {
	}

	/**
	 * The settings {@code cache}'s recorded use says would have done better; empty for a cache that records none.
	 * Where the pool's history holds every buffer since it started, the advice replays it.
	 */
	public static Optional<PoolAdvice> advise(MemoryCache cache) {
		if (!(cache instanceof StratifiedMemoryPool pool)) {
			return Optional.empty();
		}
		PoolUsage usage = pool.usage();
		PoolHistory history = pool.history().orElseThrow();
		boolean log = pool.config().history().buffers() == BufferRecording.ALL && history.complete();
		return Optional.of(log ? advise(usage, history, pool.config()) : advise(usage));
	}

	/** Advice from a pool's record. */
	public static PoolAdvice advise(PoolUsage usage) {
		return new PoolAdvice(usage.pool(), usage.requests(), ladder(usage), warm(usage), maxCached(usage), null);
	}

	/**
	 * Advice from a pool's record and its history, a log of every buffer since the pool started under
	 * {@code config}: the advised classes are replayed against it, so that the prediction counts lifetimes.
	 */
	public static PoolAdvice advise(PoolUsage usage, PoolHistory log, PoolConfig config) {
		PoolAdvice advice = advise(usage);
		HistoryReplay.ReplayResult now = HistoryReplay.replay(log, config, UNBOUNDED);
		HistoryReplay.ReplayResult advised = HistoryReplay.replay(log, config,
				SizeClassLadder.of(advice.ladder().advised().stream().mapToLong(Long::longValue).toArray()), UNBOUNDED);
		return new PoolAdvice(advice.pool(), advice.requests(), advice.ladder(), advice.warm(), advice.maxCached(),
				new PoolAdvice.Replay(now.acquires(), now.peakReservedBytes(), advised.peakReservedBytes(),
						now.heldPerLent(), advised.heldPerLent()));
	}

	private static PoolAdvice.Ladder ladder(PoolUsage usage) {
		SizeHistogram sizes = usage.requestSizes();
		List<Long> current = usage.classes().stream().map(PoolUsage.ClassUse::classBytes).toList();
		double lent = 0;
		for (int b = 0; b < SizeHistogram.BUCKETS; b++) {
			lent += sizes.bytes(b);
		}
		TreeSet<Long> ladder = new TreeSet<>(current);
		List<Long> added = new ArrayList<>();
		double held = held(sizes, ladder);
		while (added.size() < MAX_ADDED_CLASSES && lent > 0) {
			long best = 0;
			double bestHeld = held;
			for (int b = 0; b < SizeHistogram.BUCKETS; b++) {
				long candidate = Arena.spanSize((long) Math.ceil(sizes.meanSize(b)));
				if (sizes.count(b) == 0 || candidate > PoolConfig.FREE_LISTS_LIMIT || ladder.contains(candidate)) {
					continue;
				}
				ladder.add(candidate);
				double with = held(sizes, ladder);
				ladder.remove(candidate);
				if (with < bestHeld) {
					best = candidate;
					bestHeld = with;
				}
			}
			if (best == 0 || held - bestHeld < MIN_SAVING * lent) {
				break;
			}
			ladder.add(best);
			added.add(best);
			held = bestHeld;
		}
		double currentHeld = held(sizes, new TreeSet<>(current));
		return new PoolAdvice.Ladder(current, List.copyOf(ladder), added.stream().sorted().toList(),
				(lent > 0) ? currentHeld / lent : 1, (lent > 0) ? held / lent : 1);
	}

	/**
	 * The bytes the recorded requests would hold with these classes: a class's size up to the free lists'
	 * limit, a 256-byte-aligned cut above it, the request's own size above the top class.
	 */
	private static double held(SizeHistogram sizes, TreeSet<Long> ladder) {
		double held = 0;
		for (int b = 0; b < SizeHistogram.BUCKETS; b++) {
			long count = sizes.count(b);
			if (count == 0) {
				continue;
			}
			long size = (long) Math.ceil(sizes.meanSize(b));
			Long classBytes = ladder.ceiling(size);
			if (classBytes == null) {
				held += sizes.bytes(b);
			}
			else if (classBytes <= PoolConfig.FREE_LISTS_LIMIT) {
				held += (double) count * classBytes;
			}
			else {
				held += (double) count * Arena.spanSize(size);
			}
		}
		return held;
	}

	private static List<PoolAdvice.Warm> warm(PoolUsage usage) {
		return usage.classes()
			.stream()
			.filter((use) -> use.coldMisses() > 0)
			.map((use) -> new PoolAdvice.Warm(use.classBytes(), use.peakInUse(), use.misses(), use.coldMisses(),
					use.misses() - use.coldMisses()))
			.sorted(Comparator.comparingLong(PoolAdvice.Warm::coldMisses).reversed())
			.toList();
	}

	private static PoolAdvice.MaxCached maxCached(PoolUsage usage) {
		long advised = Math.max(MIB, (usage.peakReservedBytes() + MIB - 1) / MIB * MIB);
		double hitRate = (usage.requests() > 0) ? (double) usage.hits() / usage.requests() : 0;
		return new PoolAdvice.MaxCached(usage.maxCachedBytes(), advised, hitRate,
				usage.maxCachedBytes() >= usage.peakReservedBytes());
	}

}
