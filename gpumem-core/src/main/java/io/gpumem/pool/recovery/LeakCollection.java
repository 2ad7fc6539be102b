package io.gpumem.pool.recovery;

import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.gpumem.memory.ByteSizes;

/**
 * A pool's last resort before an out-of-memory failure: a garbage collection, then up to {@value #WAITS} waits
 * for the leak watch to find buffers dropped without close, doubling from 1 ms (at most half a second in all),
 * retrying each time some came back, as {@code java.nio.Bits} does before it refuses direct memory. One acquire
 * collects at a time, and one that waited for another's collection retries on what it brought back; after a
 * collection that brought nothing back none runs for {@link #QUIET_NANOS}, so that running out of memory
 * without leaks does not become a storm of collections. Logged once an episode: until an acquire is served
 * without it.
 */
final class LeakCollection {

	private static final System.Logger LOGGER = System.getLogger("io.gpumem.pool.StratifiedMemoryPool");

	private static final int WAITS = 9;

	private static final long QUIET_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final String pool;

	private final MemorySource source;

	private final RecoveryCounters counters;

	/** Whether acquires are asking the garbage collector for memory: logged when it begins. */
	private volatile boolean collecting;

	/** When the last collection ended, and whether it brought buffers back; guarded by this. */
	private long lastEnd = System.nanoTime() - QUIET_NANOS;

	private boolean lastFound = true;

	LeakCollection(String pool, MemorySource source, RecoveryCounters counters) {
		this.pool = pool;
		this.source = source;
		this.counters = counters;
	}

	/** Ends an episode: an acquire was served without a collection. */
	void served() {
		if (this.collecting) {
			this.collecting = false;
		}
	}

	/**
	 * Collects, with {@code lent} bytes lent, and calls {@code retry} after each wait that brought buffers back; an
	 * acquire that arrived while another collected retries on what that one brought back, or gives up with it.
	 * @return the block a retry got, or null
	 */
	<B> B collect(long lent, Supplier<B> retry) {
		long arrived = System.nanoTime();
		synchronized (this) {
			if (this.lastEnd - arrived > 0) {
				return this.lastFound ? retry.get() : null;
			}
			if (!this.lastFound && arrived - this.lastEnd < QUIET_NANOS) {
				return null;
			}
			return collectNow(lent, retry);
		}
	}

	private <B> B collectNow(long lent, Supplier<B> retry) {
		this.counters.countGcRequest();
		if (!this.collecting) {
			this.collecting = true;
			LOGGER.log(System.Logger.Level.WARNING, "Pool ''{0}'' ran out of memory with {1} lent: asking the "
					+ "garbage collector for buffers dropped without close() (logged once until an acquire "
					+ "succeeds without it)", this.pool, ByteSizes.format(lent));
		}
		long before = this.source.leaks();
		long seen = before;
		B block = null;
		System.gc();
		try {
			for (int wait = 0; wait < WAITS && block == null; wait++) {
				this.source.awaitLeaks(1L << wait);
				if (this.source.leaks() > seen) {
					seen = this.source.leaks();
					block = retry.get();
				}
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		finally {
			this.lastFound = seen > before;
			this.lastEnd = System.nanoTime();
		}
		return block;
	}

}
