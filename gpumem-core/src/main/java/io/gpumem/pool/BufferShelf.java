package io.gpumem.pool;

/**
 * Closed buffers of a pool set aside by key for one user's reuse, as the reduction cache keeps a few buffers
 * per (element type, slots, op). To the pool they are cached memory: counted in its statistics, under its
 * {@code max-cached}, and released first by its trims and by the out-of-memory retry. Safe for use by many
 * threads.
 */
public interface BufferShelf extends AutoCloseable {

	/** The buffer set aside under {@code key} most recently, lent again; null when there is none. */
	PooledBuffer take(Object key);

	/**
	 * Closes {@code buffer}, a buffer of this shelf's pool, onto the shelf under {@code key}: set aside while
	 * the key has fewer than the shelf's most per key and the pool's {@code max-cached} leaves room, given back
	 * to the pool as any close otherwise.
	 * @return whether it was set aside
	 * @throws IllegalArgumentException if the buffer is another pool's
	 */
	boolean put(Object key, PooledBuffer buffer);

	/** How many buffers are set aside under {@code key}. */
	int count(Object key);

	/** Bytes set aside under {@code key}, as the pool counts its blocks. */
	long cachedBytes(Object key);

	/** Bytes set aside under every key. */
	long cachedBytes();

	/**
	 * Gives buffers set aside back to the pool, the least recently set aside first whatever their key, until at
	 * most {@code keepBytes} stay set aside.
	 * @return the bytes given back
	 * @throws IllegalArgumentException if {@code keepBytes} is negative
	 */
	long trim(long keepBytes);

	/**
	 * Gives every buffer set aside back to the pool and sets none aside any more: a buffer put on it then is
	 * closed as any other. A second close does nothing.
	 */
	@Override
	void close();

}
