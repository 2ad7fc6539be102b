package io.gpumem.pool.advice;

import java.util.List;

/**
 * What a pool's recorded use says to set, each with the figure it predicts from that record: size classes
 * that would cut the bytes held per byte lent, warm-ups that would have served the cold misses, and a cap
 * on cached bytes that would have kept the hit rate.
 *
 * @param pool the pool's name
 * @param requests the requests the advice is drawn from
 * @param ladder the size classes advised
 * @param warm a warm-up per class that missed when first reaching a use, largest saving first
 * @param maxCached the cap on cached bytes advised
 * @param replay the pool's history replayed with the classes now and those advised, where it holds every buffer
 * since the pool started; null otherwise
 */
public record PoolAdvice(String pool, long requests, Ladder ladder, List<Warm> warm, MaxCached maxCached,
		Replay replay) {

	/**
	 * The recorded buffers, with their lifetimes, replayed ({@link HistoryReplay}) against the classes now and
	 * those advised: the peaks the pool reserved and would have reserved.
	 *
	 * @param acquires the acquires replayed
	 * @param peakReservedBytes the peak with the classes now
	 * @param advisedPeakReservedBytes the peak with the classes advised
	 * @param heldPerLent held at the peak per byte lent at its peak, with the classes now
	 * @param advisedHeldPerLent the same with the classes advised
	 */
	public record Replay(long acquires, long peakReservedBytes, long advisedPeakReservedBytes, double heldPerLent,
			double advisedHeldPerLent) {
	}

	/**
	 * Size classes: the ladder now and the one advised, with the bytes held per byte lent for rounding
	 * requests up to their class, as recorded and as predicted with the advised ladder.
	 *
	 * @param current the classes now
	 * @param advised the classes advised: the current ones and those added
	 * @param added the classes added, none when no class would cut the rounding by 0.5% of the bytes lent
	 * @param heldPerLent bytes held per byte lent with the current classes
	 * @param predictedHeldPerLent bytes held per byte lent with the advised classes
	 */
	public record Ladder(List<Long> current, List<Long> advised, List<Long> added, double heldPerLent,
			double predictedHeldPerLent) {
	}

	/**
	 * A warm-up of a class: the most buffers it had in use at once, which would have served every miss
	 * that met the class with fewer buffers than ever before (cold misses); misses after a trim remain.
	 *
	 * @param classBytes the class
	 * @param count the buffers to warm: its peak use
	 * @param misses its misses recorded
	 * @param coldMisses of which cold
	 * @param predictedMisses its misses with the warm-up
	 */
	public record Warm(long classBytes, long count, long misses, long coldMisses, long predictedMisses) {
	}

	/**
	 * A cap on cached bytes: the most the pool ever reserved, which it never had to drop a cached buffer
	 * under, so that the hit rate stays as recorded; where the current cap is lower, buffers may have been
	 * dropped, and the advised cap can only raise the hit rate.
	 *
	 * @param current the cap now
	 * @param advised the cap advised, the peak reserved bytes rounded up to a MiB
	 * @param hitRate the hit rate recorded
	 * @param keepsHitRate whether the record shows the advised cap keeps it exactly
	 */
	public record MaxCached(long current, long advised, double hitRate, boolean keepsHitRate) {
	}

}
