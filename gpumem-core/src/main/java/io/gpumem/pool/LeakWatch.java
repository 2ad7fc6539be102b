package io.gpumem.pool;

import java.lang.ref.ReferenceQueue;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/**
 * Watches lent buffers for leaks at a pool's {@link LeakDetection} level: at {@code paranoid} every
 * buffer, with where it was acquired; at {@code simple} every buffer of {@value #ALWAYS_WATCHED_BYTES}
 * bytes or more and one lend in {@value #SAMPLING_INTERVAL} of each smaller block. A block's first lend
 * is always watched, so a code path that leaks small buffers, and so makes the pool allocate new ones,
 * is caught at its first new block. Reclaiming is the maintenance's and the slow paths' work, never a
 * statistics read's.
 */
final class LeakWatch {

	/** At level {@code simple}, buffers of this many bytes or more are always watched: GPU memory is scarcer than heap. */
	static final long ALWAYS_WATCHED_BYTES = 64L << 10;

	/** At level {@code simple}, a smaller block is watched on one lend in this many, as Netty's sampling does. */
	static final int SAMPLING_INTERVAL = 128;

	private static final System.Logger LOGGER = System.getLogger(StratifiedMemoryPool.class.getName());

	private final LeakDetection level;

	private final ReferenceQueue<PooledBuffer> queue = new ReferenceQueue<>();

	private final LongAdder leaked = new LongAdder();

	LeakWatch(LeakDetection level) {
		this.level = level;
	}

	/** Wraps a block in a buffer for its user, watched as the level says. */
	PooledBuffer lend(StratifiedMemoryPool pool, Block block, long bytes) {
		PooledBuffer buffer = new PooledBuffer(pool, block, bytes);
		if (watches(block)) {
			Throwable site = (this.level == LeakDetection.PARANOID)
					? new Throwable("buffer of " + bytes + " bytes acquired here") : null;
			block.leak = new Block.Leak(buffer, block, this.queue, site);
		}
		return buffer;
	}

	private boolean watches(Block block) {
		return switch (this.level) {
			case DISABLED -> false;
			case PARANOID -> true;
			case SIMPLE -> block.size >= ALWAYS_WATCHED_BYTES || (block.lends++ & (SAMPLING_INTERVAL - 1)) == 0;
		};
	}

	/**
	 * Hands the blocks of watched buffers that became unreachable without close to {@code release}, and
	 * reports each.
	 * @return how many were reclaimed
	 */
	int reclaim(String pool, Consumer<Block> release) {
		int reclaimed = 0;
		Block.Leak leak;
		while ((leak = (Block.Leak) this.queue.poll()) != null) {
			Block block = leak.block;
			if (!Block.LEAK.compareAndSet(block, leak, null)) {
				continue;
			}
			this.leaked.increment();
			reclaimed++;
			LOGGER.log(System.Logger.Level.WARNING, "LEAK: a buffer of " + leak.requestedBytes + " bytes from pool '"
					+ pool + "' became unreachable without close(); its memory was reclaimed."
					+ ((leak.site == null) ? " Set leak detection to paranoid to see where it was acquired." : ""),
					leak.site);
			release.accept(block);
		}
		return reclaimed;
	}

	/** Buffers reclaimed so far. */
	long leaked() {
		return this.leaked.sum();
	}

	boolean isEnabled() {
		return this.level != LeakDetection.DISABLED;
	}

}
