package io.gpumem.pool.recovery;

import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicInteger;

import io.gpumem.memory.ByteSizes;

/**
 * Counts the threads of a pool told to give way ({@link Holdings}), and logs them once per episode: at WARN when
 * the first is told, and when no acquire waits any more, how many were told in all.
 */
final class Deadlocks {

	private static final System.Logger LOGGER = System.getLogger("io.gpumem.pool.StratifiedMemoryPool");

	private final String pool;

	private final RecoveryCounters counters;

	private final AtomicInteger told = new AtomicInteger();

	Deadlocks(String pool, RecoveryCounters counters) {
		this.pool = pool;
		this.counters = counters;
	}

	/** A thread holding {@code heldBytes} was told to give way, with {@code waiting} acquires waiting. */
	void broken(long heldBytes, int waiting) {
		this.counters.countGiveWay();
		if (this.told.getAndIncrement() == 0) {
			LOGGER.log(Level.WARNING, "Every thread holding memory of pool ''{0}'' waits for more ({1} acquires wait): "
					+ "the one holding most ({2}) is told to give way and retry (logged once until no acquire waits)",
					this.pool, waiting, ByteSizes.format(heldBytes));
		}
	}

	/** No acquire waits any more. */
	void episodeEnded() {
		int episode = this.told.getAndSet(0);
		if (episode > 1) {
			LOGGER.log(Level.INFO, "Pool ''{0}'': {1} threads were told to give way until no acquire waited", this.pool,
					episode);
		}
	}

}
