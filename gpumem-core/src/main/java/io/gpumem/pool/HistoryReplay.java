package io.gpumem.pool;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import io.gpumem.allocator.BookkeepingAllocator;
import io.gpumem.allocator.StatisticsAllocator;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryKind;

/**
 * Replays a pool's recorded history against other pool settings and a device of a given capacity, as RMM's
 * replay benchmark replays its logging adaptor's log: each recorded buffer is acquired and closed in the recorded
 * order, from the stripe of the thread that acquired it, over an allocator that books the capacity and holds no
 * memory, so that a replay costs no device memory. The log must hold every buffer (record
 * {@link BufferRecording#ALL}, and keep enough {@code events}); buffers closed after stream work count as closed
 * when their close was called, trims are not repeated, and no acquire waits for memory.
 */
public final class HistoryReplay {

	private HistoryReplay() {
	}

	/** What the recorded buffers would have done to a pool of {@code config} on a device of {@code capacityBytes}. */
	public static ReplayResult replay(PoolHistory history, PoolConfig config, long capacityBytes) {
		StatisticsAllocator device = new StatisticsAllocator(new BookkeepingAllocator(MemoryKind.DEVICE, capacityBytes));
		Map<Long, PooledBuffer> open = new HashMap<>();
		Map<String, Integer> stripes = new HashMap<>();
		ThreadState thread = ThreadState.current();
		int ownStripe = thread.stripe;
		long acquires = 0, failures = 0, lent = 0, peakLent = 0, peakReserved = 0, recordedPeak = 0;
		double fragmentation = 0;
		try (StratifiedMemoryPool pool = new StratifiedMemoryPool(device, config)) {
			for (MemoryEvent event : history.events()) {
				recordedPeak = Math.max(recordedPeak, event.reservedBytes());
				if (event.type() == MemoryEvent.Type.ACQUIRE) {
					thread.stripe = stripes.computeIfAbsent(event.thread(), (name) -> stripes.size());
					acquires++;
					try {
						open.put(event.buffer(), pool.acquire(event.bytes(), Duration.ZERO));
					}
					catch (GpuOutOfMemoryException ex) {
						failures++;
						continue;
					}
					lent += event.bytes();
					peakLent = Math.max(peakLent, lent);
					long reserved = device.statistics().currentBytes();
					if (reserved > peakReserved) {
						peakReserved = reserved;
						fragmentation = pool.statistics().segments().fragmentation();
					}
				}
				else if (event.type() == MemoryEvent.Type.CLOSE) {
					PooledBuffer buffer = open.remove(event.buffer());
					if (buffer != null) {
						lent -= buffer.size();
						buffer.close();
					}
				}
			}
			open.values().forEach(PooledBuffer::close);
		}
		finally {
			thread.stripe = ownStripe;
		}
		return new ReplayResult(acquires, peakLent, peakReserved, device.statistics().totalCount(), fragmentation,
				failures, recordedPeak);
	}

	/**
	 * What a replay found.
	 *
	 * @param acquires the recorded acquires replayed
	 * @param peakLentBytes the most bytes requested and not yet closed at once
	 * @param peakReservedBytes the most bytes the pool held from the device at once
	 * @param freshAllocations the allocations the pool made from the device
	 * @param fragmentation the pool's fragmentation figure when it reached its peak ({@link PoolStatistics.Segments})
	 * @param failures the acquires that would have run out of memory
	 * @param recordedPeakReservedBytes the most bytes the recorded pool held at once, as its events say
	 */
	public record ReplayResult(long acquires, long peakLentBytes, long peakReservedBytes, long freshAllocations,
			double fragmentation, long failures, long recordedPeakReservedBytes) {

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
