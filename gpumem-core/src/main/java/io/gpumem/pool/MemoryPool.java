package io.gpumem.pool;

import java.time.Duration;

import io.gpumem.observation.MemoryObserver;
import io.gpumem.stream.GpuStream;
import io.gpumem.stream.StreamOrder;

/**
 * A pool that lends buffers of one kind of memory: what transfers, scopes, the reduction cache, devices and
 * services acquire from, the pressure handler shrinks and the endpoint trims. {@link StratifiedMemoryPool}
 * is the implementation.
 */
public interface MemoryPool extends MemoryCache, AutoCloseable {

	/**
	 * Lends a buffer of {@code bytes} bytes, waiting for memory at most the pool's configured wait.
	 * @throws IllegalArgumentException if {@code bytes} is not positive
	 * @throws IllegalStateException if the pool is closed
	 * @throws io.gpumem.memory.GpuOutOfMemoryException if no memory could be had, even after trimming and waiting
	 */
	PooledBuffer acquire(long bytes);

	/**
	 * Lends a buffer of {@code bytes} bytes, waiting at most {@code maxWait} for memory to be returned when
	 * there is none.
	 * @throws IllegalArgumentException if {@code bytes} is not positive or {@code maxWait} negative
	 */
	PooledBuffer acquire(long bytes, Duration maxWait);

	/**
	 * Lends a buffer of {@code bytes} bytes ordered on {@code stream}: over a stream-ordered allocator a block
	 * allocated for it is ready in that stream's order, with no wait on the host; use the buffer on that
	 * stream.
	 */
	default PooledBuffer acquire(long bytes, GpuStream stream) {
		try (StreamOrder.Binding ordered = StreamOrder.bind(stream)) {
			return acquire(bytes);
		}
	}

	/**
	 * The bytes a buffer of {@code bytes} takes of the pool: its size class, or its size rounded up to the pool's
	 * alignment; what an admission by bytes counts for it.
	 */
	long blockSize(long bytes);

	/** What the pool offers an admission by bytes ({@link io.gpumem.admission.GpuAdmission}). */
	MemorySupply supply();

	/** A new shelf where a user of this pool sets closed buffers aside by key, at most {@code maxPerKey} a key. */
	BufferShelf shelf(int maxPerKey);

	/** Adds a listener told of reserved-memory growth and asked to free memory when the allocator refuses. */
	void addListener(PoolListener listener);

	/** Tells {@code observer} of every miss from now on: the reserve from the allocator, with its retries and wait. */
	void observeWith(MemoryObserver observer);

	/**
	 * Gives the device back the memory the pool holds, cached and lent, while the lent buffers keep their addresses:
	 * their bytes copied to host memory ({@link SleepMode#OFFLOAD}) or dropped ({@link SleepMode#DISCARD}), once the
	 * stream work of buffers closed after it has completed. Until {@link #wake()}, an acquire or a use of a lent
	 * buffer wakes the pool first, or fails with a {@link PoolAsleepException} where the pool is configured to refuse
	 * ({@link SleepOnAcquire}). The copies and fills of lent buffers under way ({@code copyFrom}, {@code copyTo},
	 * {@code fill}) are waited for, and then all the work the device was given; a handle unwrapped before the sleep,
	 * for a kernel or a stream's copy enqueued after it, is not: sleep a pool while it is idle.
	 * @throws IllegalStateException if the pool is closed, or lends buffers in fixed segments, whose addresses could
	 * not be kept (what it cached is released all the same)
	 */
	SleepStatus.Sleep sleep(SleepMode mode);

	/**
	 * Maps the memory behind the lent buffers again at their addresses, copying back the bytes a sleep offloaded;
	 * nothing where the pool is awake.
	 * @throws IllegalStateException if the pool is closed
	 * @throws io.gpumem.memory.GpuOutOfMemoryException if the device refuses the memory: the pool sleeps on
	 */
	SleepStatus.Wake wake();

	/** Whether the pool sleeps, and what its last sleep and wake did. */
	SleepStatus sleepStatus();

	/** Whether {@link #close()} has been called. */
	boolean isClosed();

	/**
	 * Gives every cached buffer back to the allocator; buffers still lent go back to it as they are closed.
	 * Further acquires and trims throw; a second close does nothing.
	 */
	@Override
	void close();

}
