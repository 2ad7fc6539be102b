package io.gpumem.pool.recovery;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Which threads hold memory of a pool, and which of them wait for more: where every thread holding some waits, none
 * will give any back, and {@link #stuck()} names the one holding most, to be told to give way and retry, as Spark
 * RAPIDS rolls back one task of those blocked. The one holding most frees the most at once: on the overload workload
 * all 2,000 requests completed with 584 told, where telling the one holding least let 244–333 complete with some
 * 23,000 told, each freeing too little for anyone to go on ({@code docs/overload.md}). Memory is counted on the
 * thread that acquired it, whichever closes it.
 */
public final class Holdings {

	/** The holder of a pool whose threads are never told to give way: never told, shared, written without effect. */
	static final Holder NOBODY = new Holder(null);

	/** How many new holders are registered between two sweeps of those of ended threads that hold nothing. */
	private static final int SWEEP_EVERY = 64;

	private final Set<Holder> holders = ConcurrentHashMap.newKeySet();

	private final ThreadLocal<Holder> current = ThreadLocal.withInitial(this::register);

	private final AtomicInteger registered = new AtomicInteger();

	/** The calling thread's holder. */
	public Holder current() {
		return this.current.get();
	}

	/**
	 * Where every thread holding memory waits for more, the one holding most (none told already); null where some
	 * holder does not wait, none holds anything, or one was told already.
	 */
	Holder stuck() {
		Holder most = null;
		for (Holder holder : this.holders) {
			long held = holder.held.get();
			if (held <= 0) {
				continue;
			}
			if (!holder.waiting || holder.told) {
				return null;
			}
			if (most == null || held > most.held.get()) {
				most = holder;
			}
		}
		return most;
	}

	private Holder register() {
		Holder holder = new Holder(Thread.currentThread());
		this.holders.add(holder);
		if (this.registered.incrementAndGet() % SWEEP_EVERY == 0) {
			this.holders.removeIf((each) -> each.held.get() == 0 && !each.thread.isAlive());
		}
		return holder;
	}

	/** One thread's memory of the pool, and whether it waits for more. */
	public static final class Holder {

		final Thread thread;

		private final AtomicLong held = new AtomicLong();

		/** Written by the thread itself as it begins and ends a wait. */
		volatile boolean waiting;

		/** Set where the thread was chosen to give way; cleared by the thread as its wait ends. */
		volatile boolean told;

		private Holder(Thread thread) {
			this.thread = thread;
		}

		/** Counts {@code bytes} lent to the thread. */
		public void add(long bytes) {
			this.held.addAndGet(bytes);
		}

		/** Counts {@code bytes} of the thread's given back, from any thread. */
		public void remove(long bytes) {
			this.held.addAndGet(-bytes);
		}

		/** The bytes the thread holds. */
		public long held() {
			return this.held.get();
		}

	}

}
