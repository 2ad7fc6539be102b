package io.gpumem.pool.recovery;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The line of acquires waiting for memory: one at a time, in order of arrival, the first in line tries
 * again each time a buffer comes back to the pool, and at least every {@value #POLL_MILLIS} ms for memory
 * freed elsewhere (another pool, another process), until it is served or its wait runs out. A try after a
 * return, and every {@value #FREEING_POLLS}th poll, may have memory freed ({@code freeing}); the polls between
 * only look, so that a long wait does not run the out-of-memory chain a hundred times a second. A release
 * pays one volatile read when nobody waits.
 */
final class MemoryWaiters {

	private static final long POLL_MILLIS = 10;

	private static final int FREEING_POLLS = 10;

	/** Held by the first in line; fair, so the others get it in order of arrival. */
	private final ReentrantLock line = new ReentrantLock(true);

	private final AtomicInteger waiting = new AtomicInteger();

	private volatile Thread first;

	/** Buffers that came back while someone waited: a try after one may have memory freed. */
	private final AtomicInteger returns = new AtomicInteger();

	private final RecoveryCounters counters;

	MemoryWaiters(RecoveryCounters counters) {
		this.counters = counters;
	}

	/** Whether any acquire is waiting; a newcomer that would allocate takes its place behind them. */
	boolean any() {
		return this.waiting.get() > 0;
	}

	/** Wakes the first in line to try again: memory may have come back. */
	void memoryReturned() {
		this.returns.incrementAndGet();
		Thread thread = this.first;
		if (thread != null) {
			LockSupport.unpark(thread);
		}
	}

	/**
	 * Waits in line, then runs {@code attempt} until it answers a block or {@code nanos} have passed; its
	 * argument says whether the try may have memory freed.
	 * @return the block, or null when the wait ran out (or the thread was interrupted)
	 */
	<B> B await(long nanos, Function<Boolean, B> attempt) {
		long start = System.nanoTime();
		B block = null;
		boolean ended = false;
		this.counters.countWait();
		this.waiting.incrementAndGet();
		try {
			block = inLine(start + nanos, nanos, attempt);
			ended = true;
			return block;
		}
		finally {
			this.waiting.decrementAndGet();
			this.counters.countWaitEnd(System.nanoTime() - start, ended && block == null);
		}
	}

	private <B> B inLine(long end, long nanos, Function<Boolean, B> attempt) {
		try {
			if (!this.line.tryLock(nanos, TimeUnit.NANOSECONDS)) {
				return null;
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return null;
		}
		try {
			this.first = Thread.currentThread();
			int seen = this.returns.get();
			boolean freeing = true;
			for (int poll = 1;; poll++) {
				B block = attempt.apply(freeing);
				if (block != null) {
					return block;
				}
				long left = end - System.nanoTime();
				if (left <= 0) {
					return null;
				}
				LockSupport.parkNanos(this, Math.min(left, TimeUnit.MILLISECONDS.toNanos(POLL_MILLIS)));
				if (Thread.currentThread().isInterrupted()) {
					return null;
				}
				int returned = this.returns.get();
				freeing = returned != seen || poll % FREEING_POLLS == 0;
				seen = returned;
			}
		}
		finally {
			this.first = null;
			this.line.unlock();
		}
	}

}
