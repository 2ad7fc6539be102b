package io.gpumem.stream;

import java.util.Objects;

/**
 * The stream a thread's allocations are ordered on, for allocators that allocate in stream order (CUDA's
 * stream-ordered pool, {@code gpumem.device-pool.allocator: cuda-async}), as PyTorch's current stream:
 * a request that runs its work on one stream binds it around its acquires, and a block the allocator
 * makes for it is ready in that stream's order, with no wait on the host. Other allocators ignore it.
 * <pre>{@code
 * try (StreamOrder.Binding ordered = StreamOrder.bind(stream)) {
 *     PooledBuffer input = pool.acquire(bytes);
 *     ...
 * }
 * }</pre>
 * A buffer acquired so is to be used on that stream, or on another only after an event recorded on it.
 */
public final class StreamOrder {

	private static final ThreadLocal<GpuStream> CURRENT = new ThreadLocal<>();

	private StreamOrder() {
	}

	/** Orders the calling thread's allocations on {@code stream} until the binding is closed. */
	public static Binding bind(GpuStream stream) {
		Objects.requireNonNull(stream, "stream");
		Binding binding = new Binding(Thread.currentThread(), CURRENT.get());
		CURRENT.set(stream);
		return binding;
	}

	/** The stream bound to the calling thread; null when none is. */
	public static GpuStream current() {
		return CURRENT.get();
	}

	/** A thread's binding to a stream; closing it restores the stream bound before, on the same thread. */
	public static final class Binding implements AutoCloseable {

		private final Thread thread;

		private final GpuStream previous;

		private boolean closed;

		private Binding(Thread thread, GpuStream previous) {
			this.thread = thread;
			this.previous = previous;
		}

		/**
		 * Restores the stream bound before; a second close does nothing.
		 * @throws IllegalStateException if called from another thread than the one bound
		 */
		@Override
		public void close() {
			if (Thread.currentThread() != this.thread) {
				throw new IllegalStateException("a stream binding is closed on the thread that made it, "
						+ this.thread.getName() + ", not on " + Thread.currentThread().getName());
			}
			if (!this.closed) {
				this.closed = true;
				if (this.previous != null) {
					CURRENT.set(this.previous);
				}
				else {
					CURRENT.remove();
				}
			}
		}

	}

}
