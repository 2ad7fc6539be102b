package io.gpumem.pool;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

import io.gpumem.memory.ByteSizes;

/**
 * A pool's sleep: whether it sleeps, the one rule for what an acquire or a use of a lent buffer meets then (a wake
 * first, or a refusal, as {@link PoolConfig#sleepOnAcquire()} says), and what the last sleep and wake did. Sleeps and
 * wakes take turns on its lock; the pool counts as asleep from the moment a sleep begins, so that a use begun
 * meanwhile waits for the sleep to end and then wakes the pool, and the sleep waits for the copies and fills of lent
 * buffers under way (counted per stripe of threads, each use on its thread's stripe, as Dekker's flags: a use counts
 * itself, then reads whether the pool sleeps; a sleep says so, then reads the counts). A handle unwrapped before the
 * sleep, for a kernel or a stream's copy, is not waited for: a service sleeps a pool while idle.
 */
final class PoolSleep {

	/** The distance between two stripes' counts of uses, so that each lies on a cache line of its own. */
	private static final int STRIDE = 16;

	private final StratifiedMemoryPool pool;

	private final Tiers tiers;

	private final Upkeep upkeep;

	private final Reservation listeners;

	private final SleepOnAcquire onAcquire;

	private volatile boolean asleep;

	/** Per stripe of threads, at {@code stripe * STRIDE}, the copies and fills of lent buffers under way. */
	private final AtomicLongArray uses;

	private final int stripeMask;

	/** Written under this lock, read without it, so that a reading waits for no sleep. */
	private volatile SleepStatus.Sleep lastSleep;

	private volatile SleepStatus.Wake lastWake;

	private volatile long sleeps;

	private volatile long wakes;

	/** The pool's {@code tiers} and {@code upkeep}; its {@code listeners} told of each sleep and wake. */
	PoolSleep(StratifiedMemoryPool pool, Tiers tiers, Upkeep upkeep, Reservation listeners, SleepOnAcquire onAcquire,
			int stripes) {
		this.uses = new AtomicLongArray((stripes + 1) * STRIDE);
		this.stripeMask = stripes - 1;
		this.pool = pool;
		this.tiers = tiers;
		this.upkeep = upkeep;
		this.listeners = listeners;
		this.onAcquire = onAcquire;
	}

	/**
	 * Before an acquire or a use of a lent buffer ({@code use}): nothing while the pool is awake; else wakes it, or
	 * refuses.
	 * @throws PoolAsleepException where the pool refuses while asleep
	 */
	void beforeUse(String use) {
		if (this.asleep) {
			wakeFor(use);
		}
	}

	/**
	 * Begins a copy or a fill of a lent buffer ({@code use}), which a sleep waits for: where the pool sleeps, wakes it
	 * first, or refuses.
	 * @throws PoolAsleepException where the pool refuses while asleep
	 */
	void beginUse(String use) {
		int count = countOf(ThreadState.current().stripe);
		this.uses.incrementAndGet(count);
		while (this.asleep) {
			this.uses.decrementAndGet(count);
			wakeFor(use);
			count = countOf(ThreadState.current().stripe);
			this.uses.incrementAndGet(count);
		}
	}

	/** Ends a use {@link #beginUse} began, on the same thread. */
	void endUse() {
		this.uses.decrementAndGet(countOf(ThreadState.current().stripe));
	}

	private int countOf(int stripe) {
		return ((stripe & this.stripeMask) + 1) * STRIDE;
	}

	/** Waits until no copy or fill of a lent buffer is under way: those begun see the pool asleep and wait. */
	private void awaitUses() {
		boolean interrupted = Thread.interrupted();
		for (int count = STRIDE; count < this.uses.length(); count += STRIDE) {
			while (this.uses.get(count) > 0) {
				LockSupport.parkNanos(10_000);
				interrupted |= Thread.interrupted();
			}
		}
		if (interrupted) {
			Thread.currentThread().interrupt();
		}
	}

	/** Whether the pool sleeps and what its last sleep and wake did: read while a sleep or a wake runs too. */
	SleepStatus status() {
		return new SleepStatus(this.asleep ? SleepStatus.State.ASLEEP : SleepStatus.State.AWAKE, this.sleeps,
				this.wakes, this.tiers.offloadedBytes(), this.lastSleep, this.lastWake);
	}

	/**
	 * Waits for the stream work of buffers closed after it, gives back what the pool caches, then the memory behind
	 * its lent buffers, which keep their addresses, their bytes offloaded or dropped as {@code mode} says.
	 * @throws IllegalStateException where the pool's segments are fixed and it lends any, whose addresses could not be
	 * kept: what was cached is given back all the same, and the pool stays awake
	 */
	synchronized SleepStatus.Sleep sleep(SleepMode mode) {
		PoolSleepEvent event = PoolSleepEvent.begin(this.pool.name(), "sleep");
		long start = System.nanoTime();
		boolean wasAsleep = this.asleep;
		this.asleep = this.tiers.expandable();
		try {
			if (this.asleep) {
				awaitUses();
			}
			this.upkeep.awaitPending();
			this.upkeep.giveBackLate();
			long released = this.tiers.trim(0, 0);
			long lent = Math.max(0, this.tiers.reservedBytes() - this.tiers.cachedBytes());
			if (!this.tiers.expandable() && lent > 0) {
				throw new IllegalStateException("pool '" + this.pool.name() + "' cannot sleep: it lends "
						+ ByteSizes.format(lent) + " in fixed segments, whose addresses could not be kept once their "
						+ "memory went back (expandable segments need a device with virtual memory management); "
						+ ByteSizes.format(released) + " cached was released");
			}
			long[] slept = this.tiers.sleep(mode == SleepMode.OFFLOAD);
			this.asleep = true;
			SleepStatus.Sleep report = new SleepStatus.Sleep(mode, released + slept[0], slept[1], lent,
					Duration.ofNanos(System.nanoTime() - start));
			this.lastSleep = report;
			this.sleeps++;
			event.slept(report);
			this.listeners.tellEach((listener) -> listener.slept(this.pool, report));
			return report;
		}
		catch (RuntimeException | Error ex) {
			this.asleep = this.tiers.expandable() ? this.tiers.asleep() : wasAsleep;
			throw ex;
		}
	}

	/**
	 * Maps the memory behind the lent buffers again at their addresses and copies back their bytes where they were
	 * offloaded; nothing where the pool is awake.
	 * @throws IllegalStateException if the pool was closed while asleep: its lent buffers' memory is gone
	 * @throws io.gpumem.memory.GpuOutOfMemoryException if the device refuses the memory; the pool sleeps on, what was
	 * mapped again staying mapped, for the next wake
	 */
	synchronized SleepStatus.Wake wake(String cause) {
		long start = System.nanoTime();
		if (!this.asleep) {
			return new SleepStatus.Wake(0, 0, cause, Duration.ZERO);
		}
		if (this.pool.isClosed()) {
			throw new IllegalStateException("pool '" + this.pool.name() + "' was closed while asleep: the memory "
					+ "behind its lent buffers is gone");
		}
		PoolSleepEvent event = PoolSleepEvent.begin(this.pool.name(), "wake");
		long[] woken = this.tiers.wake();
		this.asleep = false;
		SleepStatus.Wake report = new SleepStatus.Wake(woken[0], woken[1], cause,
				Duration.ofNanos(System.nanoTime() - start));
		this.lastWake = report;
		this.wakes++;
		event.woke(report);
		this.listeners.tellEach((listener) -> listener.woke(this.pool, report));
		return report;
	}

	private void wakeFor(String use) {
		if (this.onAcquire == SleepOnAcquire.REFUSE) {
			throw new PoolAsleepException("pool '" + this.pool.name() + "' is asleep and refuses " + use
					+ " (sleep on-acquire: refuse): wake it first");
		}
		wake(use);
	}

}
