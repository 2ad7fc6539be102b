package io.gpumem.pool.recovery;

import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * The line of acquires waiting for memory: one at a time, those whose threads hold memory of the pool first, each
 * kind in order of arrival, the first in line tries again each time a buffer comes back to the pool, and at least
 * every {@value #POLL_MILLIS} ms for memory freed elsewhere (another pool, another process), until it is served or
 * its wait runs out. A try after a return, and every {@value #FREEING_POLLS}th poll, may have memory freed
 * ({@code freeing}); the polls between only look, so that a long wait does not run the out-of-memory chain a hundred
 * times a second. A release pays one volatile read when nobody waits.
 * <p>
 * Where every thread holding memory of the pool waits ({@link Holdings}), none would ever be served: when the first
 * in line finds no memory even with memory freed, with another acquire waiting, it has the one holding most told to
 * give way, which ends that one's wait at once. A newcomer wakes the first in line to look, so that the last holder
 * to begin waiting is told, or has another told, without a poll's delay.
 */
final class MemoryWaiters {

	private static final long POLL_MILLIS = 10;

	private static final int FREEING_POLLS = 10;

	/**
	 * The waiting threads that hold memory of the pool, in order of arrival: they go first, as memory given to them
	 * brings their requests to an end, and so memory back, where memory given to a request that holds none yet may
	 * only make it wait for its next buffer.
	 */
	private final ConcurrentLinkedDeque<Thread> holding = new ConcurrentLinkedDeque<>();

	/** The waiting threads that hold none, in order of arrival, behind those that do. */
	private final ConcurrentLinkedDeque<Thread> empty = new ConcurrentLinkedDeque<>();

	private final AtomicInteger waiting = new AtomicInteger();

	/** Buffers that came back while someone waited: a try after one may have memory freed. */
	private final AtomicInteger returns = new AtomicInteger();

	private final RecoveryCounters counters;

	private final Holdings holdings;

	private final Deadlocks deadlocks;

	MemoryWaiters(RecoveryCounters counters, Holdings holdings, Deadlocks deadlocks) {
		this.counters = counters;
		this.holdings = holdings;
		this.deadlocks = deadlocks;
	}

	/** Whether any acquire is waiting; a newcomer that would allocate takes its place behind them. */
	boolean any() {
		return this.waiting.get() > 0;
	}

	/** How many acquires wait. */
	int count() {
		return this.waiting.get();
	}

	/** Wakes the first in line to try again: memory may have come back. */
	void memoryReturned() {
		this.returns.incrementAndGet();
		wakeFirst();
	}

	/**
	 * Waits in line, then runs {@code attempt} until it answers a block or {@code nanos} have passed; its
	 * argument says whether the try may have memory freed.
	 * @return the block, or null when the wait ran out, the thread was told to give way ({@code refusal} says so)
	 * or was interrupted
	 */
	<B> B await(long nanos, Refusal refusal, Function<Boolean, B> attempt) {
		long start = System.nanoTime();
		B block = null;
		boolean ended = false;
		Thread me = Thread.currentThread();
		Holdings.Holder holder = (this.holdings != null) ? this.holdings.current() : Holdings.NOBODY;
		this.counters.countWait();
		this.waiting.incrementAndGet();
		holder.waiting = true;
		ConcurrentLinkedDeque<Thread> line = (holder.held() > 0) ? this.holding : this.empty;
		line.addLast(me);
		try {
			wakeFirst();
			block = inLine(start + nanos, me, holder, refusal, attempt);
			ended = true;
			return block;
		}
		finally {
			line.remove(me);
			holder.waiting = false;
			holder.told = false;
			wakeFirst();
			if (this.waiting.decrementAndGet() == 0) {
				this.deadlocks.episodeEnded();
			}
			this.counters.countWaitEnd(System.nanoTime() - start, ended && block == null && !refusal.gaveWay());
		}
	}

	private <B> B inLine(long end, Thread me, Holdings.Holder holder, Refusal refusal, Function<Boolean, B> attempt) {
		int seen = this.returns.get();
		boolean freeing = true;
		for (int poll = 1;; poll++) {
			if (first() == me) {
				B block = attempt.apply(freeing);
				Holdings.Holder stuck = (block == null) ? stuck() : null;
				if (stuck != null && !freeing) {
					block = attempt.apply(true);
					stuck = (block == null) ? stuck() : null;
				}
				if (block != null) {
					return block;
				}
				if (stuck != null) {
					giveWay(stuck);
				}
			}
			long left = end - System.nanoTime();
			if (left <= 0 || toldToGiveWay(holder, refusal)) {
				return null;
			}
			LockSupport.parkNanos(this, Math.min(left, TimeUnit.MILLISECONDS.toNanos(POLL_MILLIS)));
			if (Thread.currentThread().isInterrupted() || toldToGiveWay(holder, refusal)) {
				return null;
			}
			int returned = this.returns.get();
			freeing = returned != seen || poll % FREEING_POLLS == 0;
			seen = returned;
		}
	}

	private Thread first() {
		Thread first = this.holding.peekFirst();
		return (first != null) ? first : this.empty.peekFirst();
	}

	private void wakeFirst() {
		Thread first = first();
		if (first != null) {
			LockSupport.unpark(first);
		}
	}

	private boolean toldToGiveWay(Holdings.Holder holder, Refusal refusal) {
		if (!holder.told) {
			return false;
		}
		refusal.gaveWay(holder.held());
		return true;
	}

	/**
	 * Where every thread holding memory of the pool waits, and another acquire waits besides (a lone waiter would only
	 * take back what it gave), the one holding most, to be told to give way; null otherwise.
	 */
	private Holdings.Holder stuck() {
		return (this.holdings != null && this.waiting.get() >= 2) ? this.holdings.stuck() : null;
	}

	/** Tells {@code chosen} to give way, and wakes it. */
	private void giveWay(Holdings.Holder chosen) {
		chosen.told = true;
		this.deadlocks.broken(chosen.held(), this.waiting.get());
		LockSupport.unpark(chosen.thread);
	}

}
