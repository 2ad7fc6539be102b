package io.gpumem.admission;

import java.lang.ref.PhantomReference;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import io.gpumem.config.InvalidSettingException;
import io.gpumem.memory.ByteSizes;
import io.gpumem.memory.GpuDeviceFailedException;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.pool.LeakDetection;
import io.gpumem.pool.LendAccount;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pool.MemorySupply;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.stream.GpuEvent;
import io.gpumem.stream.GpuStream;

/**
 * Admission of GPU work to a device: a request enters with the bytes of device memory it will hold at once, and,
 * where a limit is set, takes one of {@code maxConcurrent} permits; it then acquires its buffers from what it was
 * admitted for ({@link Permit#acquire}), so that it never holds part of its memory while waiting for the rest, and a
 * burst queues briefly or is turned away instead of all of it holding memory at once.
 * <p>
 * The rule of who goes first, the one rule: requests wait in one line in order of arrival, and the first in line is
 * let in as soon as a permit is free and its bytes, with the bytes of those let in before and what the pool lends
 * outside them, fit the pool's reach; none that arrives later goes first, so a large request waits only for the
 * memory of those let in before it. A request that needs nothing the line waits for (no bytes, no limit on permits)
 * is let in at once. The first in line looks again each time a permit is closed or memory comes back to the pool, and
 * at least every {@value #POLL_MILLIS} ms; one whose wait runs out is a {@link GpuAdmissionException} saying what it
 * lacked, with a retry-after estimated from the line ahead of it. A permit dropped without close is reclaimed at the
 * pool's leak-detection level, with what was lent on it counted back.
 */
public final class GpuAdmission {

	static final long POLL_MILLIS = 10;

	/** The weight of the latest hold in the mean hold time the retry-after is estimated from. */
	private static final double HOLD_WEIGHT = 0.1;

	private static final System.Logger LOGGER = System.getLogger(GpuAdmission.class.getName());

	private final String name;

	private final int maxConcurrent;

	private final Duration maxWait;

	/** The pool requests are admitted to by their bytes, or null where they are admitted by permits only. */
	private final MemorySupply memory;

	private final LeakDetection leakDetection;

	private final ReentrantLock lock = new ReentrantLock();

	/** Requests waiting, first in line first; guarded by {@link #lock}. */
	private final ArrayDeque<Waiter> line = new ArrayDeque<>();

	/** Permits closed after stream work still to run; guarded by {@link #lock}. */
	private final List<Pending> pending = new ArrayList<>();

	private final ReferenceQueue<Permit> dropped = new ReferenceQueue<>();

	/** The watches of open permits, which keep them reachable for the collector to enqueue. */
	private final Set<Watch> watches = ConcurrentHashMap.newKeySet();

	/** Bytes of blocks lent on open permits. */
	private final AtomicLong lentInPermits = new AtomicLong();

	/** The mean time a permit was held, in nanoseconds, 0 before the first close; guarded by {@link #lock}. */
	private double meanHoldNanos;

	/** Written under {@link #lock}, read without it by the statistics. */
	private volatile int active, waiting;

	private volatile long claimed, admitted, waits, timeouts, refusals, leaked, waitNanos;

	/**
	 * Admission to {@code name} (a device) for at most {@code maxConcurrent} pieces of work at once, 0 for
	 * no limit, each waiting at most {@code maxWait} by default, by permits only.
	 * @throws InvalidSettingException if {@code maxConcurrent} or {@code maxWait} is negative
	 */
	public GpuAdmission(String name, int maxConcurrent, Duration maxWait) {
		this(name, maxConcurrent, maxWait, null);
	}

	/**
	 * Admission to {@code pool} by the bytes of its memory each request holds at once, and by at most
	 * {@code maxConcurrent} permits, 0 for no limit; each request waits at most {@code maxWait} by default, and permits
	 * dropped without close are watched at the pool's leak-detection level.
	 * @throws InvalidSettingException if {@code maxConcurrent} or {@code maxWait} is negative
	 */
	public GpuAdmission(String name, int maxConcurrent, Duration maxWait, MemoryPool pool) {
		this.name = Objects.requireNonNull(name, "name");
		if (maxConcurrent < 0) {
			throw new InvalidSettingException("max-concurrent", maxConcurrent, "must be 0 (no limit) or more");
		}
		if (maxWait == null || maxWait.isNegative()) {
			throw new InvalidSettingException("max-wait", maxWait, "must be 0 or more");
		}
		this.maxConcurrent = maxConcurrent;
		this.maxWait = maxWait;
		this.memory = (pool != null) ? pool.supply() : null;
		this.leakDetection = (this.memory != null) ? this.memory.leakDetection() : LeakDetection.SIMPLE;
		if (this.memory != null) {
			this.memory.whenMemoryReturns(this::memoryReturned);
		}
	}

	/** Admission with no limit, by permits only. */
	public static GpuAdmission unlimited(String name) {
		return new GpuAdmission(name, 0, Duration.ZERO);
	}

	/** Admission to {@code pool} by bytes, with no limit on permits, each request waiting at most {@code maxWait}. */
	public static GpuAdmission of(MemoryPool pool, Duration maxWait) {
		return new GpuAdmission(pool.name(), 0, maxWait, pool);
	}

	/**
	 * A permit to run GPU work, waiting at most the configured wait.
	 * @throws GpuAdmissionException if none came free in time
	 */
	public Permit enter() {
		return enter(0, this.maxWait);
	}

	/**
	 * A permit to run GPU work holding no memory of its own, waiting at most {@code maxWait}.
	 * @throws GpuAdmissionException if none came free in time, or the thread was interrupted waiting
	 */
	public Permit enter(Duration maxWait) {
		return enter(0, maxWait);
	}

	/**
	 * A permit to run GPU work holding {@code bytes} of the pool's memory at once, the sum of the blocks
	 * ({@link MemoryPool#blockSize}) of the buffers it acquires from the permit, waiting in line at most
	 * {@code maxWait}.
	 * @throws IllegalArgumentException if {@code bytes} or {@code maxWait} is negative
	 * @throws IllegalStateException if {@code bytes} is positive and the admission has no pool
	 * @throws GpuOutOfMemoryException at once if {@code bytes} exceed the device or the budget
	 * @throws GpuAdmissionException if the wait ran out, or the thread was interrupted waiting, saying what it lacked
	 */
	public Permit enter(long bytes, Duration maxWait) {
		if (bytes < 0) {
			throw new IllegalArgumentException("the bytes a request holds must not be negative: " + bytes);
		}
		if (maxWait.isNegative()) {
			throw new IllegalArgumentException("the wait for admission must not be negative: " + maxWait);
		}
		if (bytes > 0 && this.memory == null) {
			throw new IllegalStateException("admission to " + this.name + " admits by permits only (it was made "
					+ "without a pool): cannot admit " + bytes + " bytes");
		}
		if (bytes > 0) {
			GpuOutOfMemoryException beyondReach = this.memory.refuseBeyondReach(bytes);
			if (beyondReach != null) {
				this.lock.lock();
				try {
					this.refusals++;
				}
				finally {
					this.lock.unlock();
				}
				throw beyondReach;
			}
		}
		if (bytes == 0 && this.maxConcurrent == 0) {
			this.lock.lock();
			try {
				return admit(0);
			}
			finally {
				this.lock.unlock();
			}
		}
		reclaimDropped();
		for (boolean settled = false;; settled = true) {
			this.lock.lock();
			try {
				settlePending();
				if (this.line.isEmpty() && fits(bytes)) {
					return admit(bytes);
				}
				if (settled || this.memory == null || bytes == 0) {
					return awaitTurn(bytes, maxWait);
				}
			}
			finally {
				this.lock.unlock();
			}
			settleLate();
		}
	}

	/** The device or group this admission is for. */
	public String name() {
		return this.name;
	}

	/** The most pieces of work admitted at once, 0 for no limit. */
	public int maxConcurrent() {
		return this.maxConcurrent;
	}

	/** How long {@link #enter()} waits. */
	public Duration maxWait() {
		return this.maxWait;
	}

	/** Permits open now. */
	public int active() {
		return this.active;
	}

	/** Requests waiting in line now. */
	public int waiting() {
		return this.waiting;
	}

	/** Permits handed out so far. */
	public long admitted() {
		return this.admitted;
	}

	/** Requests that had to wait, admitted or not. */
	public long waits() {
		return this.waits;
	}

	/** Time spent waiting, all requests together. */
	public Duration waitTime() {
		return Duration.ofNanos(this.waitNanos);
	}

	/** Requests turned away after waiting. */
	public long rejections() {
		return this.timeouts;
	}

	/**
	 * The admission's figures, read without the lock a request takes and changing nothing: exact when no request is
	 * being admitted or closed, a recent value otherwise.
	 */
	public AdmissionStatistics statistics() {
		return new AdmissionStatistics(this.name, this.maxConcurrent, this.active, this.waiting, this.claimed,
				Math.max(0, this.lentInPermits.get()), this.admitted, this.waits, this.timeouts, this.refusals,
				this.leaked, this.waitNanos);
	}

	@Override
	public String toString() {
		return "GpuAdmission[" + this.name + ", " + ((this.maxConcurrent > 0) ? "at most " + this.maxConcurrent : "no limit")
				+ ((this.memory != null) ? ", by the bytes of pool '" + this.memory.name() + "'" : "") + ", " + active()
				+ " active, " + waiting() + " waiting]";
	}

	/** Memory came back to the pool: permits dropped are reclaimed, and the first in line, if any, looks again. */
	private void memoryReturned() {
		reclaimDropped();
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

	/** Guarded by {@link #lock}. */
	private Permit awaitTurn(long bytes, Duration maxWait) {
		Waiter waiter = new Waiter(bytes, this.lock.newCondition());
		this.line.addLast(waiter);
		this.waiting++;
		this.waits++;
		long start = System.nanoTime();
		long end = start + maxWait.toNanos();
		boolean interrupted = false;
		try {
			for (;;) {
				checkOpen();
				if (this.line.peekFirst() == waiter && fits(bytes)) {
					this.line.removeFirst();
					return admit(bytes);
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
				this.lock.unlock();
				try {
					reclaimDropped();
					settleLate();
				}
				finally {
					this.lock.lock();
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

	/** Whether a permit is free, and {@code bytes} fit the reach; reads the pool, never calls into it; under the lock. */
	private boolean fits(long bytes) {
		return permitFree() && (bytes == 0 || outsidePermits() <= this.memory.reachBytes() - this.claimed - bytes);
	}

	/** @throws IllegalStateException if the pool admitted to was closed */
	private void checkOpen() {
		if (this.memory != null && this.memory.isClosed()) {
			throw new IllegalStateException("pool '" + this.memory.name() + "' is closed");
		}
	}

	private boolean permitFree() {
		return this.maxConcurrent == 0 || this.active < this.maxConcurrent;
	}

	/**
	 * What the pool lends outside the permits: its lent bytes read first, then those lent on permits, which a lend
	 * that ends leaves first, so that the figure is never below what it was at an instant of the read.
	 */
	private long outsidePermits() {
		long lent = this.memory.lentBytes(false);
		return Math.max(0, lent - Math.max(0, this.lentInPermits.get()));
	}

	/** Takes back the pool's blocks whose stream work completed, and its leaked ones; never under the lock. */
	private void settleLate() {
		if (this.memory != null) {
			this.memory.lentBytes(true);
		}
	}

	/** Guarded by {@link #lock}. */
	private Permit admit(long bytes) {
		this.claimed += bytes;
		this.active++;
		this.admitted++;
		Grant grant = new Grant(bytes, System.nanoTime());
		Permit permit = new Permit(grant);
		if (this.leakDetection != LeakDetection.DISABLED) {
			Throwable site = (this.leakDetection == LeakDetection.PARANOID)
					? new Throwable("admission of " + ByteSizes.format(bytes) + " entered here") : null;
			grant.watch = new Watch(permit, grant, site, this.dropped);
			this.watches.add(grant.watch);
		}
		return permit;
	}

	/** Gives back a permit's bytes and its place, {@code lent} bytes of which were lent on it; held {@code heldNanos}. */
	private void release(Grant grant, long lent, long heldNanos) {
		this.lentInPermits.addAndGet(-lent);
		Watch watch = grant.watch;
		if (watch != null) {
			this.watches.remove(watch);
			watch.clear();
		}
		this.lock.lock();
		try {
			this.claimed -= grant.bytes;
			this.active--;
			this.meanHoldNanos = (this.meanHoldNanos == 0) ? heldNanos
					: this.meanHoldNanos + HOLD_WEIGHT * (heldNanos - this.meanHoldNanos);
			signalFirst();
		}
		finally {
			this.lock.unlock();
		}
	}

	/** Reclaims the permits that became unreachable without close, with what was lent on them, and reports each. */
	private void reclaimDropped() {
		for (Reference<? extends Permit> next; (next = this.dropped.poll()) != null;) {
			Watch watch = (Watch) next;
			if (watch.grant.close()) {
				this.lock.lock();
				try {
					this.leaked++;
				}
				finally {
					this.lock.unlock();
				}
				LOGGER.log(System.Logger.Level.WARNING, "LEAK: an admission of " + ByteSizes.format(watch.grant.bytes)
						+ " to " + this.name + " became unreachable without close(); its permit and bytes were given "
						+ "back, and what was lent on it counts as any other lent buffer until reclaimed."
						+ ((watch.site == null) ? " Set leak detection to paranoid to see where it entered." : ""),
						watch.site);
			}
		}
	}

	private void signalFirst() {
		Waiter first = this.line.peekFirst();
		if (first != null) {
			first.turn.signal();
		}
	}

	/** Guarded by {@link #lock}. */
	private void settlePending() {
		for (Iterator<Pending> it = this.pending.iterator(); it.hasNext();) {
			Pending next = it.next();
			if (settled(next.event)) {
				it.remove();
				next.grant.close();
			}
		}
	}

	/** Whether the work before {@code event} has completed, or will never run: its device failed for good. */
	private static boolean settled(GpuEvent event) {
		try {
			return event.isComplete();
		}
		catch (GpuDeviceFailedException failed) {
			return true;
		}
	}

	/**
	 * The refusal of a request whose wait ran out, saying what it lacked, with a retry-after of the mean hold time for
	 * each reach's worth of the bytes ahead of it and its own, at least a second (the wait where no permit was closed
	 * yet).
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
		String within = interrupted ? "(interrupted waiting)" : "within " + maxWait.toMillis() + " ms";
		long holdNanos = (this.meanHoldNanos > 0) ? (long) this.meanHoldNanos : maxWait.toNanos();
		if (waiter.bytes == 0 || !permitFree() && waitersAhead == 0) {
			long rounds = 1 + waitersAhead / Math.max(1, this.maxConcurrent);
			return new GpuAdmissionException(GpuAdmissionException.Refused.PERMIT, String.format(
					"GPU work on %s not admitted %s: %d pieces of work run at once (the limit) and %d more wait ahead "
							+ "of it",
					this.name, within, this.active, waitersAhead), retryAfter(rounds * holdNanos));
		}
		long reach = Math.max(1, this.memory.reachBytes());
		long rounds = (ahead + waiter.bytes + reach - 1) / reach;
		return new GpuAdmissionException(GpuAdmissionException.Refused.BYTES, String.format(
				"request for %s of pool '%s' on %s not admitted %s: %s held by %d admitted requests, %s lent outside "
						+ "them, %d requests (%s) ahead in line, of a reach of %s",
				ByteSizes.format(waiter.bytes), this.memory.name(), this.name, within, ByteSizes.format(this.claimed),
				this.active, ByteSizes.format(outsidePermits()), waitersAhead, ByteSizes.format(ahead),
				ByteSizes.format(reach)), retryAfter(rounds * holdNanos));
	}

	private static Duration retryAfter(long nanos) {
		return Duration.ofSeconds(Math.max(1, (long) Math.ceil(nanos / 1e9)));
	}

	/**
	 * Leave to run GPU work holding at most its bytes of the pool's memory at once, given back on {@link #close()}
	 * (once; a second close does nothing). Buffers acquired from it count against it until they are closed; those
	 * still lent when it closes then count as any other lent buffer.
	 */
	public final class Permit implements AutoCloseable {

		private final Grant grant;

		private Permit(Grant grant) {
			this.grant = grant;
		}

		/** The bytes admitted. */
		public long bytes() {
			return this.grant.bytes;
		}

		/** The bytes not lent on the permit now: what its next acquires may take; 0 once closed. */
		public long remainingBytes() {
			long now = this.grant.lent.get();
			return (now == Grant.CLOSED) ? 0 : this.grant.bytes - now;
		}

		/** Whether the permit was closed. */
		public boolean isClosed() {
			return this.grant.lent.get() == Grant.CLOSED;
		}

		/**
		 * Lends a buffer of {@code bytes} bytes on the permit: its block ({@link MemoryPool#blockSize}) counts against
		 * the permit until the buffer ends, however it ends. Where the pool has the bytes admitted but not in one
		 * piece (its free memory split among segments), it waits for memory to come back, at most the admission's
		 * wait, as {@link MemoryPool#acquire(long, Duration)}.
		 * @throws IllegalStateException if the permit is closed, or the block does not fit in what is left of it
		 * @throws GpuOutOfMemoryException as {@link MemoryPool#acquire(long, Duration)} where memory the permit was
		 * admitted for is held outside the pool's reach (another pool or process) or in pieces for longer than the wait
		 */
		public PooledBuffer acquire(long bytes) {
			MemorySupply memory = GpuAdmission.this.memory;
			if (memory == null) {
				throw new IllegalStateException("admission to " + GpuAdmission.this.name + " admits by permits only");
			}
			long block = memory.blockSize(bytes);
			for (;;) {
				long now = this.grant.lent.get();
				if (now == Grant.CLOSED) {
					throw new IllegalStateException("admission of " + ByteSizes.format(this.grant.bytes) + " to "
							+ GpuAdmission.this.name + " is closed");
				}
				if (now + block > this.grant.bytes) {
					throw new IllegalStateException("a buffer of " + bytes + " bytes (a block of " + block
							+ ") does not fit in the admission of " + this.grant.bytes + " bytes to "
							+ GpuAdmission.this.name + ", " + now + " of which are lent; enter with the sum of the "
							+ "blocks a request acquires at once");
				}
				if (this.grant.lent.compareAndSet(now, now + block)) {
					break;
				}
			}
			GpuAdmission.this.lentInPermits.addAndGet(block);
			try {
				return memory.acquire(bytes, GpuAdmission.this.maxWait, this.grant);
			}
			catch (RuntimeException ex) {
				this.grant.ended(block);
				throw ex;
			}
			finally {
				Reference.reachabilityFence(this);
			}
		}

		/** Gives the permit and its bytes back to the admission; a second close does nothing. */
		@Override
		public void close() {
			this.grant.close();
			Reference.reachabilityFence(this);
		}

		/**
		 * Closes the permit once the work enqueued so far on {@code stream} has completed, so that no other request is
		 * admitted for memory the stream may still use; at once where that work is done (as on the host backend).
		 */
		public void closeAfter(GpuStream stream) {
			if (isClosed()) {
				return;
			}
			GpuEvent event;
			try {
				event = stream.record();
			}
			catch (GpuDeviceFailedException failed) {
				close();
				throw failed;
			}
			if (settled(event)) {
				close();
				return;
			}
			GpuAdmission.this.lock.lock();
			try {
				GpuAdmission.this.pending.add(new Pending(this.grant, event));
			}
			finally {
				GpuAdmission.this.lock.unlock();
			}
			Reference.reachabilityFence(this);
		}

		@Override
		public String toString() {
			return "Permit[" + GpuAdmission.this.name + ", " + ByteSizes.format(this.grant.bytes)
					+ (isClosed() ? ", closed" : ", " + ByteSizes.format(remainingBytes()) + " left") + "]";
		}

	}

	/**
	 * What a permit was admitted for and lends on, apart from the permit itself so that a permit dropped without close
	 * can be reclaimed: the account its buffers are lent on.
	 */
	private final class Grant implements LendAccount {

		/** What {@link #lent} holds once the permit is closed. */
		static final long CLOSED = -1;

		final long bytes;

		final long admittedAt;

		/** Bytes of the blocks lent on the permit and not yet ended, or {@link #CLOSED}. */
		final AtomicLong lent = new AtomicLong();

		/** The watch for the permit being dropped, or null. */
		Watch watch;

		Grant(long bytes, long admittedAt) {
			this.bytes = bytes;
			this.admittedAt = admittedAt;
		}

		@Override
		public void ended(long blockBytes) {
			for (;;) {
				long now = this.lent.get();
				if (now == CLOSED) {
					return;
				}
				if (this.lent.compareAndSet(now, now - blockBytes)) {
					GpuAdmission.this.lentInPermits.addAndGet(-blockBytes);
					return;
				}
			}
		}

		/** Closes the grant; whether this call closed it. */
		boolean close() {
			long held = this.lent.getAndSet(CLOSED);
			if (held == CLOSED) {
				return false;
			}
			release(this, held, System.nanoTime() - this.admittedAt);
			return true;
		}

	}

	/** Enqueued when a permit becomes unreachable without having been closed. */
	private static final class Watch extends PhantomReference<Permit> {

		final Grant grant;

		/** Where the permit was entered; null unless leak detection is paranoid. */
		final Throwable site;

		Watch(Permit permit, Grant grant, Throwable site, ReferenceQueue<Permit> queue) {
			super(permit, queue);
			this.grant = grant;
			this.site = site;
		}

	}

	private record Waiter(long bytes, Condition turn) {
	}

	private record Pending(Grant grant, GpuEvent event) {
	}

}
