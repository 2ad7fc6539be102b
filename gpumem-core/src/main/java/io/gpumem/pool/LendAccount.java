package io.gpumem.pool;

/**
 * An account a buffer is lent on besides the pool's own books, told once when the lend ends, whatever ended it:
 * closed, closed after a stream, set on a shelf, or reclaimed as a leak. An admission by bytes keeps one per request.
 */
@FunctionalInterface
public interface LendAccount {

	/** The buffer lent on this account, whose block takes {@code blockBytes} ({@link MemoryPool#blockSize}), ended. */
	void ended(long blockBytes);

}
