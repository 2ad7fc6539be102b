package io.gpumem.pool.advice;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;

import io.gpumem.allocator.BookkeepingAllocator;
import io.gpumem.allocator.StatisticsAllocator;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.LeakDetection;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PoolStatistics;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.SizeClassLadder;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.pool.ThreadStripe;
import io.gpumem.pool.diagnostics.BufferRecording;
import io.gpumem.pool.diagnostics.HistoryConfig;
import io.gpumem.pool.diagnostics.MemoryEvent;
import io.gpumem.pool.diagnostics.PoolHistory;

/**
 * Replays a pool's recorded history against other pool settings and a device of a given capacity, as RMM's
 * replay benchmark replays its logging adaptor's log: each recorded buffer is acquired and closed in the recorded
 * order, from the stripe of the thread that acquired it, over an allocator that books the capacity and holds no
 * memory, so that a replay costs no device memory. The log must hold every buffer (record
 * {@link BufferRecording#ALL}, and keep enough {@code events}). Trims are not repeated; an acquire that finds no
 * memory waits for later closes where the settings' {@code max-wait} is not zero, with no clock: as long as the
 * log lets it.
 */
public final class HistoryReplay {

	private HistoryReplay() {
	}

	/** What the recorded buffers would have done to a pool of {@code config} on a device of {@code capacityBytes}. */
	public static ReplayResult replay(PoolHistory history, PoolConfig config, long capacityBytes) {
		return replay(history, config, config.sizeClasses(), capacityBytes);
	}

	/**
	 * What the recorded buffers would have done to a pool of {@code config} but with the classes of {@code ladder}
	 * on a device of {@code capacityBytes}; the replayed pool records nothing and runs nothing on a clock.
	 * @throws IllegalArgumentException if the history dropped its first events to make room
	 */
	public static ReplayResult replay(PoolHistory history, PoolConfig config, SizeClassLadder ladder,
			long capacityBytes) {
		if (!history.complete()) {
			throw new IllegalArgumentException("the history of pool '" + history.pool() + "' dropped its first "
					+ "events to make room, so buffers acquired then would be missing; record with more "
					+ "gpumem.history.events");
		}
		Run run = new Run(new StatisticsAllocator(new BookkeepingAllocator(MemoryKind.DEVICE, capacityBytes)),
				config.maxWait().isZero());
		int ownStripe = ThreadStripe.current();
		try (StratifiedMemoryPool pool = new StratifiedMemoryPool(run.device, forReplay(config, ladder))) {
			for (MemoryEvent event : history.events()) {
				run.recordedPeak = Math.max(run.recordedPeak, event.reservedBytes());
				if (event.type() == MemoryEvent.Type.ACQUIRE) {
					run.acquires++;
					if (!run.acquire(pool, event) && !run.failAtOnce) {
						run.waiting.add(event);
					}
				}
				else if (event.type() == MemoryEvent.Type.CLOSE) {
					run.close(pool, event);
				}
			}
			run.failures += run.waiting.size();
			run.open.values().forEach(PooledBuffer::close);
		}
		finally {
			ThreadStripe.set(ownStripe);
		}
		return new ReplayResult(run.acquires, run.peakLent, run.peakReserved, run.device.statistics().totalCount(),
				run.fragmentation, run.waited, run.failures, run.recordedPeak);
	}

	/**
	 * The settings of {@code config} with the classes of {@code ladder}, under a name of its own, with nothing that
	 * records or runs on a clock: no history, no idle trim, no leak detection.
	 */
	private static PoolConfig forReplay(PoolConfig config, SizeClassLadder ladder) {
		PoolConfig.Builder builder = PoolConfig.builder(config.name() + " (replay)")
			.maxCachedBytes(config.maxCachedBytes())
			.oomRetries(config.oomRetries())
			.maxWait(config.maxWait())
			.leakDetection(LeakDetection.DISABLED)
			.history(new HistoryConfig(BufferRecording.OFF, 0))
			.stripes(config.stripes())
			.segmentSize(config.segmentBytes());
		config.warm().forEach(builder::warm);
		config.maxCachedBuffers().forEach(builder::maxCachedBuffers);
		return builder.sizeClasses(ladder).build();
	}

	/** A replay under way: the buffers open, the acquires waiting for memory, and what it has found so far. */
	private static final class Run {

		final StatisticsAllocator device;

		/** Whether an acquire that finds no memory fails, as with {@code max-wait} zero, rather than waits. */
		final boolean failAtOnce;

		final Map<Long, PooledBuffer> open = new HashMap<>();

		/** Acquires waiting, in the order they came, for closes to give memory back, as a pool's waiters do. */
		final Deque<MemoryEvent> waiting = new ArrayDeque<>();

		final Map<String, Integer> stripes = new HashMap<>();

		long acquires, waited, failures, lent, peakLent, peakReserved, recordedPeak;

		double fragmentation;

		Run(StatisticsAllocator device, boolean failAtOnce) {
			this.device = device;
			this.failAtOnce = failAtOnce;
		}

		/** Acquires the recorded buffer from the stripe of the thread that did; false where no memory could be had. */
		boolean acquire(StratifiedMemoryPool pool, MemoryEvent event) {
			ThreadStripe.set(this.stripes.computeIfAbsent(event.thread(), (name) -> this.stripes.size()));
			try {
				this.open.put(event.buffer(), pool.acquire(event.bytes(), Duration.ZERO));
			}
			catch (GpuOutOfMemoryException ex) {
				if (this.failAtOnce) {
					this.failures++;
				}
				return false;
			}
			this.lent += event.bytes();
			this.peakLent = Math.max(this.peakLent, this.lent);
			long reserved = this.device.statistics().currentBytes();
			if (reserved > this.peakReserved) {
				this.peakReserved = reserved;
				this.fragmentation = pool.statistics().segments().fragmentation();
			}
			return true;
		}

		/**
		 * Closes the recorded buffer and serves the acquires waiting, in order, while memory lasts; a buffer closed
		 * while its acquire still waited was never served.
		 */
		void close(StratifiedMemoryPool pool, MemoryEvent event) {
			PooledBuffer buffer = this.open.remove(event.buffer());
			if (buffer == null) {
				if (this.waiting.removeIf((acquire) -> acquire.buffer() == event.buffer())) {
					this.failures++;
				}
				return;
			}
			this.lent -= buffer.size();
			buffer.close();
			while (!this.waiting.isEmpty() && acquire(pool, this.waiting.peek())) {
				this.waiting.poll();
				this.waited++;
			}
		}

	}

	/**
	 * What a replay found.
	 *
	 * @param acquires the recorded acquires replayed
	 * @param peakLentBytes the most bytes requested and not yet closed at once
	 * @param peakReservedBytes the most bytes the pool held from the device at once
	 * @param freshAllocations the allocations the pool made from the device
	 * @param fragmentation the pool's fragmentation figure when it reached its peak ({@link PoolStatistics.Segments})
	 * @param waits the acquires that found no memory and were served by a later close, as the pool's
	 * {@code max-wait} lets them be
	 * @param failures the acquires that would have run out of memory: at once where {@code max-wait} is zero, else
	 * those no close served before their buffer was closed or the log ended
	 * @param recordedPeakReservedBytes the most bytes the recorded pool held at once, as its events say
	 */
	public record ReplayResult(long acquires, long peakLentBytes, long peakReservedBytes, long freshAllocations,
			double fragmentation, long waits, long failures, long recordedPeakReservedBytes) {

		/** Bytes held at the peak per byte lent at its peak; 1.0 is the physical limit. */
		public double heldPerLent() {
			return (this.peakLentBytes > 0) ? (double) this.peakReservedBytes / this.peakLentBytes : 1;
		}

		/** Whether any acquire would have run out of memory. */
		public boolean ranOut() {
			return this.failures > 0;
		}

	}

}
