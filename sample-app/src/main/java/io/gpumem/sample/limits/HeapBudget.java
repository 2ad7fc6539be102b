package io.gpumem.sample.limits;

import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.gpumem.memory.ByteSizes;

/**
 * The heap that requests in flight may hold at once: each request reserves what its body and arrays
 * will take before it takes it, first come first served, waiting at most a bounded time. However many
 * requests arrive, and however large, together they never hold more than the budget.
 */
public final class HeapBudget {

	/**
	 * Heap a request may need per byte of its JSON body, parsing included: a number as short as
	 * {@code 0,} (2 bytes) becomes a 4-byte element, parsed through growing chunks, and a result as large.
	 */
	public static final int BYTES_PER_BODY_BYTE = 6;

	/**
	 * Heap a parsed body holds per byte of its JSON: a number takes at least 2 bytes ({@code 0,}) and
	 * becomes 4, an edge at least 6 ({@code [0,1],}) and becomes 8.
	 */
	public static final int PARSED_BYTES_PER_BODY_BYTE = 2;

	/** Bytes a permit stands for, so that budgets of terabytes fit an int. */
	private static final long UNIT = 1024;

	private final long bytes;

	private final Duration wait;

	private final int total;

	private final Semaphore permits;

	private final AtomicLong peakReservedBytes = new AtomicLong();

	/** A budget of {@code bytes}, for which a reservation waits at most {@code wait}. */
	public HeapBudget(long bytes, Duration wait) {
		this.bytes = bytes;
		this.wait = wait;
		this.total = Math.toIntExact(Math.max(1, bytes / UNIT));
		this.permits = new Semaphore(this.total, true);
	}

	/** The budget's size in bytes. */
	public long bytes() {
		return this.bytes;
	}

	/** Bytes reserved by requests now. */
	public long reservedBytes() {
		return (this.total - (long) this.permits.availablePermits()) * UNIT;
	}

	/** The most bytes reserved at once since the budget was made. */
	public long peakReservedBytes() {
		return this.peakReservedBytes.get();
	}

	/**
	 * Reserves {@code bytes} of heap, waiting in turn for others to give theirs back.
	 * @throws PayloadTooLargeException if {@code bytes} is more than the whole budget
	 * @throws OverloadedException if the wait ran out first
	 */
	public Reservation reserve(long bytes) {
		Reservation reservation = new Reservation();
		reservation.grow(bytes);
		return reservation;
	}

	/** Heap held for one request, given back on {@link #close()}; it can grow while the request runs. */
	public final class Reservation implements AutoCloseable {

		private int held;

		private Reservation() {
		}

		/** Reserves {@code bytes} more, as {@link HeapBudget#reserve(long)} does. */
		public void grow(long bytes) {
			int more = permitsFor(bytes);
			if ((long) this.held + more > HeapBudget.this.total) {
				throw new PayloadTooLargeException("the request needs " + ByteSizes.format(((long) this.held + more) * UNIT)
						+ " of heap, more than the whole budget of " + ByteSizes.format(HeapBudget.this.bytes)
						+ " for requests in flight (sample.heap-budget)");
			}
			try {
				if (!HeapBudget.this.permits.tryAcquire(more, HeapBudget.this.wait.toNanos(), TimeUnit.NANOSECONDS)) {
					throw new OverloadedException("the service is busy: requests in flight hold "
							+ ByteSizes.format(reservedBytes()) + " of the heap budget of "
							+ ByteSizes.format(HeapBudget.this.bytes) + " (sample.heap-budget), and "
							+ ByteSizes.format((long) more * UNIT) + " more did not come free within "
							+ HeapBudget.this.wait.toMillis() + " ms (sample.queue-timeout)", HeapBudget.this.wait);
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new OverloadedException("interrupted while waiting for heap", HeapBudget.this.wait);
			}
			this.held += more;
			HeapBudget.this.peakReservedBytes.accumulateAndGet(reservedBytes(), Math::max);
		}

		/**
		 * The body this reservation was made for has been parsed: keeps what its values hold and gives back
		 * what parsing took on top.
		 */
		public void bodyParsed() {
			int keep = (int) ((long) this.held * PARSED_BYTES_PER_BODY_BYTE / BYTES_PER_BODY_BYTE);
			HeapBudget.this.permits.release(this.held - keep);
			this.held = keep;
		}

		/** Bytes this reservation holds. */
		public long bytes() {
			return this.held * UNIT;
		}

		@Override
		public void close() {
			int released = this.held;
			this.held = 0;
			HeapBudget.this.permits.release(released);
		}

	}

	private static int permitsFor(long bytes) {
		return (int) Math.min(Integer.MAX_VALUE, (Math.max(0, bytes) + UNIT - 1) / UNIT);
	}

}
