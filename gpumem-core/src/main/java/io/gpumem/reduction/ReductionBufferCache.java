package io.gpumem.reduction;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import io.gpumem.config.InvalidSettingException;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pool.PoolListener;
import io.gpumem.pool.PoolStatistics;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.SizeClassStatistics;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.stream.GpuEvent;
import io.gpumem.stream.GpuStream;

/**
 * Device buffers for repeated reductions (PageRank iterations, convergence checks), cached by
 * (element type, slot count, op): the second acquire of a key is a hit, and every acquire starts with
 * each slot at the op's identity.
 * <p>
 * A buffer acquired on a stream is reset on that stream, after the work already there, and goes back to
 * the cache once that stream's work has completed: the way to use it with kernels on gpumem's streams.
 * <p>
 * When the allocator refuses, the cache's listeners (the pressure handler) free memory of the device,
 * the device pool's cache included, and it retries, up to {@value #OUT_OF_MEMORY_RETRIES} times; without
 * listeners it trims itself once.
 * <p>
 * At most {@code maxBuffersPerKey} buffers of a key stay cached; one closed beyond that is freed. Results
 * are read through the pinned pool. Its statistics take the shape of a
 * pool's, one size-class row per buffer size, so it can be shown beside the pools (as
 * {@code reduction}).
 */
public final class ReductionBufferCache implements MemoryPool, AutoCloseable {

	/** Retries of a refused allocation, one per step of the pressure handler's out-of-memory chain. */
	static final int OUT_OF_MEMORY_RETRIES = 3;

	private final String name;

	private final MemoryAllocator allocator;

	private final StratifiedMemoryPool pinned;

	private final int maxBuffersPerKey;

	/** Cached buffers per key, most recently returned first. */
	private final Map<ReductionKey, Deque<Allocation>> cached = new ConcurrentHashMap<>();

	private final Map<Long, SizeCounters> sizes = new ConcurrentHashMap<>();

	private final AtomicLong reservedBytes = new AtomicLong();

	private final AtomicLong peakReservedBytes = new AtomicLong();

	private final AtomicLong cachedBytes = new AtomicLong();

	private final AtomicLong trimmedBytes = new AtomicLong();

	private final LongAdder allocationFailures = new LongAdder();

	private final List<PoolListener> listeners = new CopyOnWriteArrayList<>();

	private volatile boolean closed;

	/**
	 * @param name the name the cache's statistics go by, such as {@code reduction}
	 * @param allocator where the device buffers come from
	 * @param pinned the pinned pool results are read through
	 * @param maxBuffersPerKey the most buffers of one key kept cached
	 */
	public ReductionBufferCache(String name, MemoryAllocator allocator, StratifiedMemoryPool pinned,
			int maxBuffersPerKey) {
		if (maxBuffersPerKey < 0) {
			throw new InvalidSettingException("max-buffers-per-key", maxBuffersPerKey, "must not be negative");
		}
		if (pinned.kind() != MemoryKind.PINNED) {
			throw new IllegalArgumentException("results are read through a PINNED pool, not " + pinned.kind());
		}
		this.name = Objects.requireNonNull(name, "name");
		this.allocator = Objects.requireNonNull(allocator, "allocator");
		this.pinned = pinned;
		this.maxBuffersPerKey = maxBuffersPerKey;
	}

	/**
	 * A buffer of {@code slots} elements of a primitive type such as {@code float.class}, each at the op's
	 * identity when this returns.
	 */
	public ReductionBuffer acquire(Class<?> elementType, int slots, ReductionOp op) {
		return acquire(ElementType.of(elementType), slots, op, null);
	}

	/**
	 * A buffer of {@code slots} elements of a primitive type such as {@code float.class}, reset to the op's
	 * identity on {@code stream}, for kernels enqueued there after it; it returns to the cache once the
	 * stream's work has completed.
	 */
	public ReductionBuffer acquire(Class<?> elementType, int slots, ReductionOp op, GpuStream stream) {
		return acquire(ElementType.of(elementType), slots, op, Objects.requireNonNull(stream, "stream"));
	}

	/** A buffer of {@code slots} elements of {@code type}, each at the op's identity when this returns. */
	public ReductionBuffer acquire(ElementType type, int slots, ReductionOp op) {
		return acquire(type, slots, op, null);
	}

	/**
	 * A buffer of {@code slots} elements of {@code type}, each at the op's identity: at once, or on
	 * {@code stream} when one is given.
	 * @throws IllegalArgumentException for no slots or a BYTE element type
	 * @throws GpuOutOfMemoryException if no device memory could be had, even after trimming the cache
	 */
	public ReductionBuffer acquire(ElementType type, int slots, ReductionOp op, GpuStream stream) {
		ReductionKey key = new ReductionKey(type, slots, op);
		checkOpen();
		SizeCounters counters = counters(key.bytes());
		counters.requests.increment();
		Allocation allocation = pollCached(key);
		if (allocation != null) {
			counters.hits.increment();
		}
		else {
			counters.misses.increment();
			allocation = allocate(key.bytes());
		}
		counters.inUse.incrementAndGet();
		ReductionBuffer buffer = new ReductionBuffer(this, key, allocation, stream);
		try {
			buffer.reset();
		}
		catch (RuntimeException ex) {
			buffer.close();
			throw ex;
		}
		return buffer;
	}

	@Override
	public String name() {
		return this.name;
	}

	@Override
	public MemoryKind kind() {
		return this.allocator.kind();
	}

	@Override
	public long cachedBytes() {
		return this.cachedBytes.get();
	}

	@Override
	public long reservedBytes() {
		return this.reservedBytes.get();
	}

	/** Frees cached buffers, the least recently returned of each key first, until at most {@code keepBytes} stay. */
	@Override
	public long trim(long keepBytes) {
		if (keepBytes < 0) {
			throw new IllegalArgumentException("trim target must not be negative: " + keepBytes + " bytes");
		}
		long released = freeCached(keepBytes);
		this.trimmedBytes.addAndGet(released);
		return released;
	}

	private long freeCached(long keepBytes) {
		long released = 0;
		for (Map.Entry<ReductionKey, Deque<Allocation>> entry : this.cached.entrySet()) {
			Deque<Allocation> deque = entry.getValue();
			while (this.cachedBytes.get() > keepBytes) {
				Allocation oldest;
				synchronized (deque) {
					oldest = deque.pollLast();
					if (oldest == null) {
						break;
					}
					uncache(entry.getKey(), oldest);
				}
				free(oldest);
				released += oldest.size();
			}
		}
		return released;
	}

	@Override
	public PoolStatistics statistics() {
		List<SizeClassStatistics> rows = new ArrayList<>();
		long requests = 0;
		long hits = 0;
		long misses = 0;
		long returns = 0;
		long inUseBuffers = 0;
		long inUseBytes = 0;
		long cachedBuffers = 0;
		for (Map.Entry<Long, SizeCounters> entry : new TreeMap<>(this.sizes).entrySet()) {
			long size = entry.getKey();
			SizeCounters counters = entry.getValue();
			SizeClassStatistics row = new SizeClassStatistics(size, counters.requests.sum(), counters.hits.sum(),
					counters.misses.sum(), counters.returns.sum(), counters.inUse.get(), counters.cached.get());
			rows.add(row);
			requests += row.requests();
			hits += row.hits();
			misses += row.misses();
			returns += row.returns();
			inUseBuffers += row.inUseBuffers();
			inUseBytes += row.inUseBytes();
			cachedBuffers += row.cachedBuffers();
		}
		return new PoolStatistics(this.name, kind(), requests, hits, misses, returns, inUseBytes, inUseBuffers,
				this.cachedBytes.get(), cachedBuffers, this.reservedBytes.get(), this.peakReservedBytes.get(),
				this.trimmedBytes.get(), this.allocationFailures.sum(), 0, PoolStatistics.Waits.NONE, rows,
				PoolStatistics.AboveTopClass.NONE, PoolStatistics.Segments.NONE);
	}

	/** Frees every cached buffer; buffers still lent are freed when closed. */
	@Override
	public void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		freeCached(0);
	}

	/** A slot's bits, read on {@code stream} through pinned memory, or synchronously without one. */
	long readSlot(ReductionBuffer buffer, int slot, GpuStream stream) {
		int bytes = buffer.key().type().bytes();
		if (stream == null) {
			Object value = (bytes == Integer.BYTES) ? new int[1] : new long[1];
			buffer.copyToArray((long) slot * bytes, value, 0, 1);
			return (value instanceof int[] word) ? word[0] : ((long[]) value)[0];
		}
		try (PooledBuffer staging = this.pinned.acquire(bytes)) {
			stream.copy(buffer, (long) slot * bytes, staging, 0, bytes);
			try (GpuEvent copied = stream.record()) {
				copied.await();
			}
			if (bytes == Integer.BYTES) {
				int[] value = new int[1];
				staging.copyTo(value);
				return value[0];
			}
			long[] value = new long[1];
			staging.copyTo(value);
			return value[0];
		}
	}

	/** Enqueues setting every slot to {@code identity} on {@code stream}, from identities staged in pinned memory. */
	void resetOn(GpuStream stream, ReductionBuffer buffer, long identity) {
		PooledBuffer staging = this.pinned.acquire(buffer.size());
		try {
			ReductionBuffer.writeIdentities(staging, buffer.key(), identity);
			stream.copy(staging, 0, buffer, 0, buffer.size());
		}
		finally {
			staging.closeAfter(stream);
		}
	}

	void release(ReductionKey key, Allocation allocation) {
		SizeCounters counters = counters(key.bytes());
		counters.returns.increment();
		counters.inUse.decrementAndGet();
		if (!this.closed) {
			Deque<Allocation> deque = this.cached.computeIfAbsent(key, (k) -> new ArrayDeque<>());
			synchronized (deque) {
				if (deque.size() < this.maxBuffersPerKey) {
					deque.push(allocation);
					counters.cached.incrementAndGet();
					this.cachedBytes.addAndGet(allocation.size());
					return;
				}
			}
			this.trimmedBytes.addAndGet(allocation.size());
		}
		free(allocation);
	}

	private Allocation pollCached(ReductionKey key) {
		Deque<Allocation> deque = this.cached.get(key);
		if (deque == null) {
			return null;
		}
		synchronized (deque) {
			Allocation allocation = deque.poll();
			if (allocation != null) {
				uncache(key, allocation);
			}
			return allocation;
		}
	}

	private void uncache(ReductionKey key, Allocation allocation) {
		counters(key.bytes()).cached.decrementAndGet();
		this.cachedBytes.addAndGet(-allocation.size());
	}

	@Override
	public void addListener(PoolListener listener) {
		this.listeners.add(Objects.requireNonNull(listener, "listener"));
	}

	private Allocation allocate(long bytes) {
		for (int attempt = 0;; attempt++) {
			try {
				Allocation allocation = this.allocator.allocate(bytes);
				this.peakReservedBytes.accumulateAndGet(this.reservedBytes.addAndGet(bytes), Math::max);
				this.listeners.forEach((listener) -> listener.reservedMemoryGrew(this));
				return allocation;
			}
			catch (GpuOutOfMemoryException ex) {
				if (attempt >= OUT_OF_MEMORY_RETRIES || makeRoom(bytes, attempt) == 0) {
					this.allocationFailures.increment();
					this.listeners.forEach((listener) -> listener.allocationFailed(this, bytes));
					throw new GpuOutOfMemoryException(ex.diagnostic()
						.withPool(this.reservedBytes.get() - this.cachedBytes.get(), this.cachedBytes.get(), -1), ex);
				}
			}
		}
	}

	private long makeRoom(long bytes, int attempt) {
		if (this.listeners.isEmpty()) {
			return (attempt == 0) ? trim(0) : 0;
		}
		long freed = 0;
		for (PoolListener listener : this.listeners) {
			freed += listener.outOfMemory(this, bytes, attempt);
		}
		return freed;
	}

	private void free(Allocation allocation) {
		this.reservedBytes.addAndGet(-allocation.size());
		this.allocator.free(allocation);
	}

	private SizeCounters counters(long bytes) {
		return this.sizes.computeIfAbsent(bytes, (size) -> new SizeCounters());
	}

	private void checkOpen() {
		if (this.closed) {
			throw new IllegalStateException("reduction buffer cache '" + this.name + "' is closed");
		}
	}

	/** The counters of one buffer size. */
	private static final class SizeCounters {

		final LongAdder requests = new LongAdder();

		final LongAdder hits = new LongAdder();

		final LongAdder misses = new LongAdder();

		final LongAdder returns = new LongAdder();

		final AtomicLong inUse = new AtomicLong();

		final AtomicLong cached = new AtomicLong();

	}

}
