package io.gpumem.pool;

import java.lang.ref.PhantomReference;
import java.lang.ref.ReferenceQueue;

import io.gpumem.pool.arena.Block;
import io.gpumem.pool.diagnostics.PoolRecorder;
import io.gpumem.pool.recovery.Holdings;

/**
 * Watches lent buffers for leaks at a pool's {@link LeakDetection} level: at {@code paranoid} every
 * buffer, with where it was acquired; at {@code simple} every buffer of {@value Block#WATCHED_BYTES}
 * bytes or more, every buffer the pool allocated a block for, and one other acquire in
 * {@value #SAMPLING_INTERVAL} per thread. A code path that leaks small buffers soon makes the pool
 * allocate, so it is caught at its first new block. Reclaiming is the maintenance's and the slow paths'
 * work, never a statistics read's.
 */
final class LeakWatch {

	/** At level {@code simple}, one other acquire in this many per thread is watched, as Netty's sampling does. */
	static final int SAMPLING_INTERVAL = 128;

	private static final System.Logger LOGGER = System.getLogger(StratifiedMemoryPool.class.getName());

	private final LeakDetection level;

	private final ReferenceQueue<PooledBuffer> queue = new ReferenceQueue<>();

	private final PoolCounters counters;

	private final PoolRecorder recorder;

	LeakWatch(LeakDetection level, PoolCounters counters, PoolRecorder recorder) {
		this.level = level;
		this.counters = counters;
		this.recorder = recorder;
	}

	/**
	 * When an acquire of {@code bytes} about to take its block began, if it is recorded
	 * ({@link PoolRecorder#acquiring}).
	 */
	long begin(long bytes) {
		return this.recorder.acquiring(bytes);
	}

	/**
	 * Wraps a block in a buffer for its user, going back to stripe {@code home}, watched as the level
	 * says and recorded as begun at {@code recorded} ({@link PoolRecorder#acquiring}) where that is not
	 * {@link PoolRecorder#NOT_RECORDED}; {@code allocated} tells a block the pool has just allocated for this acquire.
	 */
	PooledBuffer lend(StratifiedMemoryPool pool, Block block, long bytes, ThreadState thread, int home,
			boolean allocated, long recorded, Holdings.Holder holder, LendAccount account) {
		PoolRecorder.Lend lend = (recorded != PoolRecorder.NOT_RECORDED)
				? this.recorder.lent(block, bytes, block.size, recorded, home) : null;
		PooledBuffer buffer = new PooledBuffer(pool, block, bytes, home, lend, holder, account);
		if (watches(block, thread, allocated)) {
			Throwable site = (this.level == LeakDetection.PARANOID)
					? new Throwable("buffer of " + bytes + " bytes acquired here") : null;
			block.watch = new Leak(buffer, block, home, this.queue, site, lend, holder, account);
		}
		return buffer;
	}

	/** The level buffers are watched at. */
	LeakDetection level() {
		return this.level;
	}

	private boolean watches(Block block, ThreadState thread, boolean allocated) {
		return switch (this.level) {
			case DISABLED -> false;
			case PARANOID -> true;
			case SIMPLE -> allocated || block.size >= Block.WATCHED_BYTES
					|| (thread.acquires++ & (SAMPLING_INTERVAL - 1)) == 0;
		};
	}

	/** Whether any buffer is watched: whether buffers dropped without close can come back at all. */
	boolean watching() {
		return this.level != LeakDetection.DISABLED;
	}

	/**
	 * Ends, through {@code pool}, the lends of watched buffers that became unreachable without close, as a close
	 * would have, and counts and reports each once its block is back: a reader who sees a leak counted sees its
	 * memory back, while one who sees the memory back may read the count a moment before it grows.
	 * @return how many were reclaimed
	 */
	int reclaim(StratifiedMemoryPool pool) {
		int reclaimed = 0;
		for (Leak leak; (leak = (Leak) this.queue.poll()) != null;) {
			reclaimed += reclaim(pool, leak);
		}
		return reclaimed;
	}

	/**
	 * As {@link #reclaim(StratifiedMemoryPool)}, first waiting up to {@code timeoutMillis} for the garbage collector
	 * to find a watched buffer unreachable.
	 */
	int awaitReclaim(StratifiedMemoryPool pool, long timeoutMillis) throws InterruptedException {
		Leak first = (Leak) this.queue.remove(timeoutMillis);
		return (first != null) ? reclaim(pool, first) + reclaim(pool) : 0;
	}

	private int reclaim(StratifiedMemoryPool pool, Leak leak) {
		Block block = leak.block;
		if (!Block.WATCH.compareAndSet(block, leak, null)) {
			return 0;
		}
		pool.endLend(block, leak.stripe, leak.requestedBytes, leak.lend, leak.holder, leak.account);
		this.counters.countLeak();
		LOGGER.log(System.Logger.Level.WARNING, "LEAK: a buffer of " + leak.requestedBytes + " bytes from pool '"
				+ pool.name() + "' became unreachable without close(); its memory was reclaimed."
				+ ((leak.site == null) ? " Set leak detection to paranoid to see where it was acquired." : ""),
				leak.site);
		return 1;
	}

	/**
	 * Enqueued when the buffer lending a block becomes unreachable without having been closed. The
	 * block references it while lent ({@link Block#watch}), which keeps it reachable for the garbage collector to
	 * enqueue.
	 */
	private static final class Leak extends PhantomReference<PooledBuffer> {

		final Block block;

		/** The stripe the block goes back to. */
		final int stripe;

		final long requestedBytes;

		/** Where the buffer was acquired; null unless leak detection is paranoid. */
		final Throwable site;

		/** The buffer's recorded lend, or null. */
		final PoolRecorder.Lend lend;

		/** The thread whose holdings count the block, or null. */
		final Holdings.Holder holder;

		/** The account the buffer was lent on, or null. */
		final LendAccount account;

		Leak(PooledBuffer buffer, Block block, int stripe, ReferenceQueue<PooledBuffer> queue, Throwable site,
				PoolRecorder.Lend lend, Holdings.Holder holder, LendAccount account) {
			super(buffer, queue);
			this.block = block;
			this.stripe = stripe;
			this.requestedBytes = buffer.size();
			this.site = site;
			this.lend = lend;
			this.holder = holder;
			this.account = account;
		}

	}

}
