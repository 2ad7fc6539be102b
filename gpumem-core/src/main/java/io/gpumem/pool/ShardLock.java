package io.gpumem.pool;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.AbstractQueuedSynchronizer;
import java.util.function.ObjLongConsumer;
import java.util.function.Supplier;

/**
 * The lock of an arena shard, which a free never waits on: a free that finds it held is queued, and the holder applies
 * the queued frees as it takes the lock and again as it lets go, so that a fit looked for under the lock sees every
 * free queued before, and no free waits behind a cut or a mapping. A taker spins a little before it parks, as HotSpot
 * does on a monitor: the lock is held for well under a microsecond, and a park and wake-up take tens. Not reentrant.
 * Its end is padded, so that two shards' locks side by side never share a cache line.
 */
@SuppressWarnings({ "serial", "unused" })
final class ShardLock extends AbstractQueuedSynchronizer {

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
		do {
			try {
				applyQueued();
			}
			finally {
				release(1);
			}
		}
		while (!this.queued.isEmpty() && tryAcquire(1));
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

	private void applyQueued() {
		for (Freed freed = this.queued.poll(); freed != null; freed = this.queued.poll()) {
			this.free.accept(freed.block, freed.stamp);
		}
	}

	@Override
	protected boolean tryAcquire(int ignored) {
		return getState() == 0 && compareAndSetState(0, 1);
	}

	@Override
	protected boolean tryRelease(int ignored) {
		setState(0);
		return true;
	}

	private record Freed(Block block, long stamp) {
	}

}
