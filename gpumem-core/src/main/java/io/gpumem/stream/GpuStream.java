package io.gpumem.stream;

import io.gpumem.buffer.GpuBuffer;

/**
 * An ordered queue of copies and fills that run asynchronously to the calling thread: a CUDA stream
 * on the cuda backend, immediate execution on the host backend.
 * <p>
 * Work is enqueued in order and runs in that order; the caller learns of completion through an event
 * ({@link #record()}) or {@link #synchronize()}. Host memory taking part in an asynchronous copy must be
 * PINNED, so that the device can reach it while the caller goes on; buffers must stay open until the
 * work using them has completed.
 */
public interface GpuStream extends AutoCloseable {

	/**
	 * Enqueues a copy of {@code bytes} bytes from {@code source} at {@code sourceOffset} to
	 * {@code target} at {@code targetOffset}.
	 * @throws IndexOutOfBoundsException if a range lies outside its buffer
	 * @throws IllegalArgumentException if the two kinds of memory cannot be copied asynchronously
	 */
	void copy(GpuBuffer source, long sourceOffset, GpuBuffer target, long targetOffset, long bytes);

	/** Enqueues a copy of all of {@code source} to the start of {@code target}. */
	default void copy(GpuBuffer source, GpuBuffer target) {
		copy(source, 0, target, 0, source.size());
	}

	/** Enqueues setting {@code bytes} bytes of {@code target} from {@code offset} to {@code value}. */
	void fill(GpuBuffer target, long offset, long bytes, byte value);

	/**
	 * Enqueues moving UNIFIED memory to the device ({@code cuMemPrefetchAsync}), so that kernels do not
	 * fault it in page by page; a hint that does nothing where the device or backend cannot act on it.
	 * @throws IllegalArgumentException if the buffer is not UNIFIED memory
	 */
	void prefetchToDevice(GpuBuffer buffer);

	/** Enqueues moving UNIFIED memory to the host, as {@link #prefetchToDevice} does to the device. */
	void prefetchToHost(GpuBuffer buffer);

	/** Records an event that completes when all work enqueued so far has completed. */
	GpuEvent record();

	/**
	 * Waits until all work enqueued so far has completed: a virtual thread parks, a platform thread waits in the driver
	 * ({@link GpuWaits}).
	 */
	void synchronize();

	/**
	 * The backend's native stream, as JDBC's {@code unwrap}: {@code jcuda.driver.CUstream} on the cuda
	 * backend, for launching kernels on this stream.
	 * @throws IllegalArgumentException if the backend has no native stream of that type
	 */
	default <T> T unwrap(Class<T> type) {
		throw new IllegalArgumentException(getClass().getSimpleName() + " has no native stream of type " + type.getName());
	}

	/** Whether {@link #close()} has been called: a closed stream's work has all completed. */
	boolean isClosed();

	/** Waits for the enqueued work, then releases the stream. */
	@Override
	void close();

}
