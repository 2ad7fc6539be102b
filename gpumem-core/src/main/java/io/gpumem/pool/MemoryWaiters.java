package io.gpumem.pool;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The line of acquires waiting for memory: one at a time, in order of arrival, the first in line tries
 * again each time a buffer comes back to the pool, and at least every {@value #POLL_MILLIS} ms for memory
 * freed elsewhere (another pool, another process), until it is served or its wait runs out. A release
 * pays one volatile read when nobody waits.
 */
final class MemoryWaiters {

	private static final long POLL_MILLIS = 10;

	/** Held by the first in line; fair, so the others get it in order of arrival. */
	private final ReentrantLock line = new ReentrantLock(true);

	private final AtomicInteger waiting = new AtomicInteger();

	private volatile Thread first;

	private final PoolCounters counters;

	MemoryWaiters(PoolCounters counters) {
		this.counters = counters;
	}

	/** Whether any acquire is waiting; a newcomer that would allocate takes its place behind them. */
	boolean any() {
		return this.waiting.get() > 0;
	}

	/** Wakes the first in line to try again: memory may have come back. */
	void memoryReturned() {
		Thread thread = this.first;
		if (thread != null) {
			LockSupport.unpark(thread);
		}
	}

	/**
	 * Waits in line, then runs {@code attempt} until it answers a block or {@code nanos} have passed.
	 * @return the block, or null when the wait ran out (or the thread was interrupted)
	 */
	Block await(long nanos, Supplier<Block> attempt) {
		long start = System.nanoTime();
		Block block = null;
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

	private Block inLine(long end, long nanos, Supplier<Block> attempt) {
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
			for (;;) {
				Block block = attempt.get();
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
			}
		}
		finally {
			this.first = null;
			this.line.unlock();
		}
	}

}
