package io.gpumem.pool;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

import io.gpumem.admission.GpuAdmissionException;
import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.stream.GpuEvent;

/**
 * A pool's admission by bytes: {@link MemoryClaim}s are admitted in order of arrival while what is claimed, with
 * what is lent outside claims, fits the pool's reach (its device's capacity or its budget). None that arrives later
 * goes first, so a large claim waits only for the memory of those admitted before it. A waiting claim looks again
 * each time a claim is closed or a buffer comes back, and at least every {@value #POLL_MILLIS} ms; one whose wait
 * runs out is a {@link GpuAdmissionException} whose retry-after is estimated from the line ahead of it.
 */
final class Claims {

	private static final long POLL_MILLIS = 10;

	/** The weight of the latest hold in the mean hold time the retry-after is estimated from. */
	private static final double HOLD_WEIGHT = 0.1;

	private final String pool;

	/** The pool's bytes lent, and closed after stream work still to run: what it holds that no trim reaches. */
	private final LongSupplier occupied;

	/** The most bytes the pool could hold: its device's capacity or its budget. */
	private final LongSupplier reach;

	/** Takes back the pool's blocks whose stream work completed and its leaked ones; answers whether any came back. */
	private final BooleanSupplier giveBackLate;

	private final ReentrantLock lock = new ReentrantLock();

	/** Claims waiting, first in line first; guarded by {@link #lock}. */
	private final ArrayDeque<Waiter> line = new ArrayDeque<>();

	/** Claims closed after stream work still to run; guarded by {@link #lock}. */
	private final List<Pending> pending = new ArrayList<>();

	/**
	 * Bytes of the open claims, and how many they are; written under {@link #lock}, read without it by
	 * {@link #statistics()}, as are the counts below.
	 */
	private volatile long claimed;

	private volatile int open;

	/** The mean time a claim was held, in nanoseconds, 0 before the first close; guarded by {@link #lock}. */
	private double meanHoldNanos;

	private volatile long admitted, waits, timeouts, refusals, waitNanos;

	/** Bytes of blocks lent from open claims. */
	private final AtomicLong lentInClaims = new AtomicLong();

	private volatile int waiting;

	Claims(String pool, LongSupplier occupied, LongSupplier reach, BooleanSupplier giveBackLate) {
		this.pool = pool;
		this.occupied = occupied;
		this.reach = reach;
		this.giveBackLate = giveBackLate;
	}

	/**
	 * Admits a claim of {@code bytes} in turn, waiting at most {@code maxWait}.
	 * @param beyondReach the failure of a claim larger than the reach, or null
	 * @throws GpuOutOfMemoryException {@code beyondReach}, at once
	 * @throws GpuAdmissionException if the wait ran out, or the thread was interrupted waiting
	 */
	MemoryClaim claim(StratifiedMemoryPool owner, long bytes, Duration maxWait, GpuOutOfMemoryException beyondReach) {
		this.lock.lock();
		try {
			if (beyondReach != null) {
				this.refusals++;
				throw beyondReach;
			}
			settlePending();
			if (this.line.isEmpty() && fits(bytes)) {
				return admit(owner, bytes);
			}
			return awaitTurn(owner, bytes, maxWait);
		}
		finally {
			this.lock.unlock();
		}
	}

	/** A buffer came back to the pool: the first claim in line, if any, looks again. */
	void memoryReturned() {
		if (this.waiting > 0) {
			this.lock.lock();
			try {
				signalFirst();
			}
			finally {
				this.lock.unlock();
			}
		}
	}

	void lent(long block) {
		this.lentInClaims.addAndGet(block);
	}

	void returned(long block) {
		this.lentInClaims.addAndGet(-block);
	}

	/** Closes {@code claim}, of which {@code lent} bytes were lent, held for {@code heldNanos}. */
	void release(MemoryClaim claim, long lent, long heldNanos) {
		this.lentInClaims.addAndGet(-lent);
		this.lock.lock();
		try {
			this.claimed -= claim.bytes();
			this.open--;
			this.meanHoldNanos = (this.meanHoldNanos == 0) ? heldNanos
					: this.meanHoldNanos + HOLD_WEIGHT * (heldNanos - this.meanHoldNanos);
			signalFirst();
		}
		finally {
			this.lock.unlock();
		}
	}

	/** Closes {@code claim} once {@code event} completes: at the first look after that. */
	void closeAfter(MemoryClaim claim, GpuEvent event) {
		if (Upkeep.settled(event)) {
			claim.close();
			return;
		}
		this.lock.lock();
		try {
			this.pending.add(new Pending(claim, event));
		}
		finally {
			this.lock.unlock();
		}
	}

	/** Wakes every claim in line, to find the pool closed. */
	void close() {
		this.lock.lock();
		try {
			this.line.forEach((waiter) -> waiter.turn.signal());
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * The admission's figures, read without the lock a claim takes and changing nothing, as the pool's statistics:
	 * exact when no claim is being admitted or closed, a recent value otherwise.
	 */
	PoolStatistics.Claims statistics() {
		return new PoolStatistics.Claims(this.claimed, Math.max(0, this.lentInClaims.get()), this.open, this.waiting,
				this.admitted, this.waits, this.timeouts, this.refusals, this.waitNanos);
	}

	private MemoryClaim awaitTurn(StratifiedMemoryPool owner, long bytes, Duration maxWait) {
		Waiter waiter = new Waiter(bytes, this.lock.newCondition());
		this.line.addLast(waiter);
		this.waiting++;
		this.waits++;
		long start = System.nanoTime();
		long end = start + maxWait.toNanos();
		boolean interrupted = false;
		try {
			for (;;) {
				owner.checkOpen();
				if (this.line.peekFirst() == waiter && fits(bytes)) {
					this.line.removeFirst();
					return admit(owner, bytes);
				}
				long left = end - System.nanoTime();
				if (left <= 0) {
					break;
				}
				try {
					waiter.turn.awaitNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(POLL_MILLIS)));
				}
				catch (InterruptedException ex) {
					interrupted = true;
					break;
				}
				settlePending();
			}
			this.timeouts++;
			throw notAdmitted(waiter, maxWait, interrupted);
		}
		finally {
			this.line.remove(waiter);
			this.waiting--;
			this.waitNanos += System.nanoTime() - start;
			signalFirst();
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	private boolean fits(long bytes) {
		long room = this.reach.getAsLong() - this.claimed - bytes;
		return outsideClaims() <= room || (this.giveBackLate.getAsBoolean() && outsideClaims() <= room);
	}

	private long outsideClaims() {
		return Math.max(0, this.occupied.getAsLong() - Math.max(0, this.lentInClaims.get()));
	}

	private MemoryClaim admit(StratifiedMemoryPool owner, long bytes) {
		this.claimed += bytes;
		this.open++;
		this.admitted++;
		return new MemoryClaim(owner, this, bytes, System.nanoTime());
	}

	private void signalFirst() {
		Waiter first = this.line.peekFirst();
		if (first != null) {
			first.turn.signal();
		}
	}

	private void settlePending() {
		for (Iterator<Pending> it = this.pending.iterator(); it.hasNext();) {
			Pending next = it.next();
			if (Upkeep.settled(next.event)) {
				it.remove();
				next.claim.close();
			}
		}
	}

	/**
	 * The refusal of a claim whose wait ran out, with a retry-after of the mean hold time for each reach's worth
	 * of the claims ahead of it and its own, at least a second (the wait where no claim was closed yet).
	 */
	private GpuAdmissionException notAdmitted(Waiter waiter, Duration maxWait, boolean interrupted) {
		long ahead = 0;
		int waitersAhead = 0;
		for (Waiter each : this.line) {
			if (each == waiter) {
				break;
			}
			ahead += each.bytes;
			waitersAhead++;
		}
		long reach = Math.max(1, this.reach.getAsLong());
		long rounds = (ahead + waiter.bytes + reach - 1) / reach;
		long holdNanos = (this.meanHoldNanos > 0) ? (long) this.meanHoldNanos : maxWait.toNanos();
		long seconds = Math.max(1, (long) Math.ceil(rounds * holdNanos / 1e9));
		return new GpuAdmissionException(String.format("claim of %s on pool '%s' not admitted %s: %s claimed by %d "
				+ "requests, %s lent outside claims, %d claims (%s) ahead in line, of a reach of %s",
				ByteSizes.format(waiter.bytes), this.pool,
				interrupted ? "(interrupted waiting)" : "within " + maxWait.toMillis() + " ms",
				ByteSizes.format(this.claimed), this.open, ByteSizes.format(outsideClaims()), waitersAhead,
				ByteSizes.format(ahead), ByteSizes.format(reach)), Duration.ofSeconds(seconds));
	}

	private record Waiter(long bytes, Condition turn) {
	}

	private record Pending(MemoryClaim claim, GpuEvent event) {
	}

}
