package io.gpumem.pool;

import java.util.Optional;

import io.gpumem.pool.diagnostics.PoolHistory;

/**
 * Memory kept ready to lend, which a trim gives back: a pool, or a cache over one (the reduction cache). What
 * the endpoint lists and trims, and what the meters and the health indicator read.
 */
public interface MemoryCache extends PoolMetric, AutoCloseable {

	/** Bytes cached, ready to lend: what a trim can give back. */
	long cachedBytes();

	/** Bytes held: lent out and cached. */
	long reservedBytes();

	/** Bytes lent out: those held and not cached. */
	default long usedBytes() {
		return Math.max(0, reservedBytes() - cachedBytes());
	}

	/**
	 * Releases cached memory, least recently used first, until at most {@code keepBytes} stay cached.
	 * @return the bytes released
	 * @throws IllegalArgumentException if {@code keepBytes} is negative
	 */
	long trim(long keepBytes);

	/** Every segment with its blocks and what each is doing; empty for a cache that cuts no segments. */
	default Optional<PoolSnapshot> snapshot() {
		return Optional.empty();
	}

	/**
	 * The recent events of its bounded history, oldest first: recorded buffers acquired and closed, segments
	 * allocated and released, trims, failures; empty for a cache that records none.
	 */
	default Optional<PoolHistory> history() {
		return Optional.empty();
	}

	/** Gives back what it caches; what is still lent goes back as it is closed. A second close does nothing. */
	@Override
	void close();

}
