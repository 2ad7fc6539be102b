package io.gpumem.scope;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;

import io.gpumem.memory.ElementType;
import io.gpumem.admission.GpuAdmission;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pool.PooledBuffer;

/**
 * A group of buffers from one pool released together: the buffers of one graph traversal, one query,
 * one request. Closing the scope closes every buffer still open in it; a buffer closed on its own
 * before leaves the scope's books right. Counts current and peak bytes, and allocations raw and typed.
 * <pre>{@code
 * try (MemoryScope scope = MemoryScope.open("pagerank", pool)) {
 *     ScopedBuffer ranks = scope.allocate(float.class, nodes);
 *     ScopedBuffer edges = scope.allocate(int.class, 2 * edgeCount);
 *     ...
 * } // both back in the pool
 * }</pre>
 */
public final class MemoryScope implements AutoCloseable {

	private final String name;

	/** Where the scope's buffers come from: a pool, or an admission's permit on one. */
	private final LongFunction<PooledBuffer> source;

	private final Set<ScopedBuffer> open;

	private final AtomicLong currentBytes = new AtomicLong();

	private final AtomicLong peakBytes = new AtomicLong();

	private final AtomicLong allocations = new AtomicLong();

	private final AtomicLong typedAllocations = new AtomicLong();

	private volatile boolean closed;

	private MemoryScope(String name, LongFunction<PooledBuffer> source, int expectedAllocations) {
		this.name = Objects.requireNonNull(name, "name");
		this.source = source;
		this.open = ConcurrentHashMap.newKeySet(Math.max(16, expectedAllocations));
	}

	/** An empty scope over {@code pool}. */
	public static MemoryScope open(String name, MemoryPool pool) {
		return new MemoryScope(name, Objects.requireNonNull(pool, "pool")::acquire, 16);
	}

	/** An empty scope whose buffers are drawn from {@code permit} ({@link GpuAdmission.Permit#acquire}). */
	public static MemoryScope open(String name, GpuAdmission.Permit permit) {
		return new MemoryScope(name, Objects.requireNonNull(permit, "permit")::acquire, 16);
	}

	/** A builder for a scope that knows its workload in advance. */
	public static Builder builder(String name, MemoryPool pool) {
		return new Builder(name, pool);
	}

	/** The scope's name. */
	public String name() {
		return this.name;
	}

	/**
	 * A raw buffer of {@code bytes} bytes.
	 * @throws IllegalStateException if the scope is closed
	 */
	public ScopedBuffer allocate(long bytes) {
		return track(this.source.apply(bytes), null);
	}

	/**
	 * A buffer of {@code count} elements of a primitive type such as {@code float.class}.
	 * @throws IllegalArgumentException for a type gpumem does not copy, or a count that is not positive
	 */
	public ScopedBuffer allocate(Class<?> elementType, long count) {
		ElementType type = ElementType.of(elementType);
		if (count <= 0) {
			throw new IllegalArgumentException("element count must be positive: " + count);
		}
		ScopedBuffer buffer = track(this.source.apply(type.byteSize(count)), type);
		this.typedAllocations.incrementAndGet();
		return buffer;
	}

	/** A snapshot of the scope's books. */
	public ScopeStatistics statistics() {
		return new ScopeStatistics(this.name, this.currentBytes.get(), this.peakBytes.get(), this.allocations.get(),
				this.typedAllocations.get(), this.open.size());
	}

	/** Whether {@link #close()} has been called. */
	public boolean isClosed() {
		return this.closed;
	}

	/** Closes every buffer still open in the scope; a second call does nothing. */
	@Override
	public void close() {
		this.closed = true;
		List<ScopedBuffer> remaining = new ArrayList<>(this.open);
		remaining.forEach(ScopedBuffer::close);
	}

	void closed(ScopedBuffer buffer) {
		if (this.open.remove(buffer)) {
			this.currentBytes.addAndGet(-buffer.size());
		}
	}

	private ScopedBuffer track(PooledBuffer pooled, ElementType type) {
		if (this.closed) {
			pooled.close();
			throw new IllegalStateException("scope '" + this.name + "' is closed");
		}
		ScopedBuffer buffer = new ScopedBuffer(this, pooled, type);
		this.open.add(buffer);
		this.allocations.incrementAndGet();
		this.peakBytes.accumulateAndGet(this.currentBytes.addAndGet(pooled.size()), Math::max);
		if (this.closed) {
			buffer.close();
			throw new IllegalStateException("scope '" + this.name + "' is closed");
		}
		return buffer;
	}

	@Override
	public String toString() {
		return "MemoryScope[" + this.name + ", " + this.open.size() + " open" + (this.closed ? ", closed" : "") + "]";
	}

	/** Builds a {@link MemoryScope}, warming its pool for a known workload first. */
	public static final class Builder {

		private final String name;

		private final MemoryPool pool;

		private final List<Long> preallocations = new ArrayList<>();

		private int expectedAllocations = 16;

		private Builder(String name, MemoryPool pool) {
			this.name = name;
			this.pool = pool;
		}

		/** How many buffers the scope will hold at once, to size its books. */
		public Builder expectedAllocations(int count) {
			if (count < 0) {
				throw new IllegalArgumentException("expected allocations must not be negative: " + count);
			}
			this.expectedAllocations = count;
			return this;
		}

		/** A buffer of {@code bytes} bytes the workload will ask for: one is cached in the pool before the scope opens. */
		public Builder preallocate(long bytes) {
			if (bytes <= 0) {
				throw new IllegalArgumentException("preallocation size must be positive: " + bytes);
			}
			this.preallocations.add(bytes);
			return this;
		}

		/**
		 * Acquires every preallocation at once, so that each is its own buffer, and returns them to the
		 * pool, where the scope's allocations of those sizes will find them.
		 */
		public MemoryScope build() {
			List<PooledBuffer> warm = new ArrayList<>(this.preallocations.size());
			try {
				for (long bytes : this.preallocations) {
					warm.add(this.pool.acquire(bytes));
				}
			}
			finally {
				warm.forEach(PooledBuffer::close);
			}
			return new MemoryScope(this.name, this.pool::acquire, this.expectedAllocations);
		}

	}

}
