package io.gpumem.pool;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.AbstractQueuedSynchronizer;
import java.util.function.ObjLongConsumer;
import java.util.function.Supplier;

/**
 * The lock of an arena shard, which a free never waits on: a free that finds it held is queued, and the holder applies
 * the queued frees as it takes the lock and again as it lets go, so that a fit looked for under the lock sees every
 * free queued before, and no free waits behind a cut or a mapping. A taker spins a little before it parks, as HotSpot
 * does on a monitor: a cut holds the lock for well under a microsecond, and a park and wake-up take tens. Reentrant,
 * as the monitor it replaces was, for an allocator that calls back into the pool. Its end is padded, so that two
 * shards' locks side by side never share a cache line.
 */
@SuppressWarnings({ "serial", "unused" })
final class ShardLock extends AbstractQueuedSynchronizer {

	private static final Logger LOG = System.getLogger(ShardLock.class.getName());

	/** How often a taker finds the lock held before it parks. */
	private static final int SPINS = 64;

	/** Frees a block's span at a stamp of the pool's clock, under the lock. */
	private final ObjLongConsumer<Block> free;

	private final Queue<Freed> queued = new ConcurrentLinkedQueue<>();

	private long q01, q02, q03, q04, q05, q06, q07, q08, q09, q10, q11, q12, q13, q14, q15, q16;

	ShardLock(ObjLongConsumer<Block> free) {
		this.free = free;
	}

	void lock() {
		for (int spins = SPINS; !tryAcquire(1); spins--) {
			if (spins == 0) {
				acquire(1);
				break;
			}
			Thread.onSpinWait();
		}
		applyQueued();
	}

	/** Lets go of the lock, and takes it again for as long as frees are queued that no other holder applies. */
	void unlock() {
		boolean free;
		do {
			applyQueued();
			free = release(1);
		}
		while (free && !this.queued.isEmpty() && tryAcquire(1));
	}

	/** Applies the frees queued now, once the lock is free: what is counted after is exact. */
	void settle() {
		lock();
		unlock();
	}

	/** The value {@code action} answers under the lock. */
	<T> T locked(Supplier<T> action) {
		lock();
		try {
			return action.get();
		}
		finally {
			unlock();
		}
	}

	/**
	 * Frees a block's span at {@code stamp} under the lock where it is free, else queues it for the holder, who
	 * lets go of the lock only after it looks at the queue again ({@link #unlock}).
	 */
	void free(Block block, long stamp) {
		if (tryAcquire(1)) {
			try {
				this.free.accept(block, stamp);
			}
			finally {
				unlock();
			}
		}
		else {
			this.queued.add(new Freed(block, stamp));
			if (tryAcquire(1)) {
				unlock();
			}
		}
	}

	/** Applies the queued frees; one refused (a span freed twice) is logged: the thread that freed it has gone on. */
	private void applyQueued() {
		for (Freed freed = this.queued.poll(); freed != null; freed = this.queued.poll()) {
			try {
				this.free.accept(freed.block, freed.stamp);
			}
			catch (RuntimeException ex) {
				LOG.log(Level.ERROR, "A block given back while its arena shard was busy was refused", ex);
			}
		}
	}

	@Override
	protected boolean tryAcquire(int ignored) {
		int holds = getState();
		Thread current = Thread.currentThread();
		if (holds == 0 && compareAndSetState(0, 1)) {
			setExclusiveOwnerThread(current);
			return true;
		}
		if (holds > 0 && getExclusiveOwnerThread() == current) {
			setState(holds + 1);
			return true;
		}
		return false;
	}

	@Override
	protected boolean tryRelease(int ignored) {
		int holds = getState() - 1;
		if (holds == 0) {
			setExclusiveOwnerThread(null);
		}
		setState(holds);
		return holds == 0;
	}

	private record Freed(Block block, long stamp) {
	}

}
