package io.gpumem.admission;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import io.gpumem.config.InvalidSettingException;

/**
 * A limit on the GPU work a device runs at once: at most {@code maxConcurrent} pieces of work hold a
 * {@link Permit}, the others wait for one in order of arrival, each at most its wait, and are turned away
 * with a {@link GpuAdmissionException} when that runs out. A service takes a permit around a request's
 * device work, so that a burst queues briefly or is refused instead of all of it holding memory at once.
 * With no limit a permit is a pair of counter updates.
 */
public final class GpuAdmission {

	private final String name;

	private final int maxConcurrent;

	private final Duration maxWait;

	private final Semaphore permits;

	private final AtomicInteger active = new AtomicInteger();

	private final AtomicInteger waiting = new AtomicInteger();

	private final LongAdder admitted = new LongAdder();

	private final LongAdder waits = new LongAdder();

	private final LongAdder waitNanos = new LongAdder();

	private final LongAdder rejections = new LongAdder();

	/**
	 * Admission to {@code name} (a device) for at most {@code maxConcurrent} pieces of work at once, 0 for
	 * no limit, each waiting at most {@code maxWait} by default.
	 * @throws IllegalArgumentException if {@code maxConcurrent} or {@code maxWait} is negative
	 */
	public GpuAdmission(String name, int maxConcurrent, Duration maxWait) {
		this.name = Objects.requireNonNull(name, "name");
		if (maxConcurrent < 0) {
			throw new InvalidSettingException("max-concurrent", maxConcurrent, "must be 0 (no limit) or more");
		}
		if (maxWait == null || maxWait.isNegative()) {
			throw new InvalidSettingException("max-wait", maxWait, "must be 0 or more");
		}
		this.maxConcurrent = maxConcurrent;
		this.maxWait = maxWait;
		this.permits = (maxConcurrent > 0) ? new Semaphore(maxConcurrent, true) : null;
	}

	/** Admission with no limit. */
	public static GpuAdmission unlimited(String name) {
		return new GpuAdmission(name, 0, Duration.ZERO);
	}

	/**
	 * A permit to run GPU work, waiting at most the configured wait.
	 * @throws GpuAdmissionException if none came free in time
	 */
	public Permit enter() {
		return enter(this.maxWait);
	}

	/**
	 * A permit to run GPU work, waiting at most {@code maxWait} (less where the caller's deadline is nearer).
	 * @throws GpuAdmissionException if none came free in time, or the thread was interrupted waiting
	 */
	public Permit enter(Duration maxWait) {
		if (this.permits != null && !admitted(Duration.ZERO)) {
			await(maxWait);
		}
		this.active.incrementAndGet();
		this.admitted.increment();
		return new Permit();
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

	/** Pieces of work holding a permit now. */
	public int active() {
		return this.active.get();
	}

	/** Callers waiting for a permit now. */
	public int waiting() {
		return this.waiting.get();
	}

	/** Callers in the permits' queue, in turn: those counted waiting that have reached it. */
	int queued() {
		return (this.permits != null) ? this.permits.getQueueLength() : 0;
	}

	/** Permits handed out so far. */
	public long admitted() {
		return this.admitted.sum();
	}

	/** Callers that had to wait for a permit, admitted or not. */
	public long waits() {
		return this.waits.sum();
	}

	/** Time spent waiting, all callers together. */
	public Duration waitTime() {
		return Duration.ofNanos(this.waitNanos.sum());
	}

	/** Callers turned away. */
	public long rejections() {
		return this.rejections.sum();
	}

	@Override
	public String toString() {
		return "GpuAdmission[" + this.name + ", " + ((this.maxConcurrent > 0) ? "at most " + this.maxConcurrent : "no limit")
				+ ", " + active() + " active, " + waiting() + " waiting]";
	}

	private void await(Duration maxWait) {
		this.waits.increment();
		this.waiting.incrementAndGet();
		long start = System.nanoTime();
		boolean admittedInTime;
		try {
			admittedInTime = admitted(maxWait);
		}
		finally {
			this.waiting.decrementAndGet();
			this.waitNanos.add(System.nanoTime() - start);
		}
		if (!admittedInTime) {
			this.rejections.increment();
			throw new GpuAdmissionException("GPU work on " + this.name + " not admitted: " + this.maxConcurrent
					+ " pieces of work run at once (the limit) and " + waiting() + " more wait; none finished within "
					+ maxWait.toMillis() + " ms", this.maxWait.isZero() ? Duration.ofSeconds(1) : this.maxWait);
		}
	}

	/** Takes a permit in turn behind the callers already waiting (a fair semaphore's untimed try would not). */
	private boolean admitted(Duration wait) {
		try {
			return this.permits.tryAcquire(wait.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	/** Leave to run GPU work, given back on {@link #close()} (once; a second close does nothing). */
	public final class Permit implements AutoCloseable {

		private boolean closed;

		private Permit() {
		}

		@Override
		public void close() {
			if (this.closed) {
				return;
			}
			this.closed = true;
			GpuAdmission.this.active.decrementAndGet();
			if (GpuAdmission.this.permits != null) {
				GpuAdmission.this.permits.release();
			}
		}

	}

}
