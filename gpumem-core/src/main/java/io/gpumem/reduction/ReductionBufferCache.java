package io.gpumem.reduction;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import io.gpumem.config.InvalidSettingException;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.BufferShelf;
import io.gpumem.pool.MemoryCache;
import io.gpumem.pool.MemoryPool;
import io.gpumem.pool.PoolStatistics;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.SizeClassStatistics;
import io.gpumem.stream.GpuEvent;
import io.gpumem.stream.GpuStream;

/**
 * Device buffers for repeated reductions (PageRank iterations, convergence checks), by (element type, slot
 * count, op): every acquire starts with each slot at the op's identity, and a closed buffer is set aside for
 * its key, at most {@code maxBuffersPerKey} a key, so that the next acquire of the key takes it again.
 * <p>
 * The memory is the device pool's: acquired through it (with its retries, waits and out-of-memory chain), set
 * aside on a {@linkplain MemoryPool#shelf shelf} of it, so that the pool counts it in its statistics, caps it,
 * watches it for leaks and gives it back on its trims, the shelf first.
 * <p>
 * A buffer acquired on a stream is reset on that stream, after the work already there, and set aside once
 * that stream's work has completed: the way to use it with kernels on gpumem's streams. Results are read
 * through the pinned pool. Its own figures take the shape of a pool's, a row per buffer size, so that it shows
 * beside the pools (as {@code reduction}); its bytes are the device pool's blocks behind its buffers. A
 * buffer dropped without close is reclaimed by the device pool's leak watch, and stays counted here as lent.
 */
public final class ReductionBufferCache implements MemoryCache, AutoCloseable {

	private final String name;

	private final MemoryPool devicePool;

	private final MemoryPool pinned;

	private final BufferShelf shelf;

	private final Map<Long, SizeCounters> sizes = new ConcurrentHashMap<>();

	private final AtomicLong peakReservedBytes = new AtomicLong();

	private final LongAdder trimmedBytes = new LongAdder();

	private final LongAdder allocationFailures = new LongAdder();

	private volatile boolean closed;

	/**
	 * @param name the name the cache's figures go by, such as {@code reduction}
	 * @param devicePool the device pool its buffers come from and are set aside in
	 * @param pinned the pinned pool results are read through
	 * @param maxBuffersPerKey the most buffers of one key set aside
	 */
	public ReductionBufferCache(String name, MemoryPool devicePool, MemoryPool pinned, int maxBuffersPerKey) {
		if (maxBuffersPerKey < 0) {
			throw new InvalidSettingException("max-buffers-per-key", maxBuffersPerKey, "must not be negative");
		}
		if (devicePool.kind() != MemoryKind.DEVICE) {
			throw new IllegalArgumentException("reduction buffers come from a DEVICE pool, not " + devicePool.kind());
		}
		if (pinned.kind() != MemoryKind.PINNED) {
			throw new IllegalArgumentException("results are read through a PINNED pool, not " + pinned.kind());
		}
		this.name = Objects.requireNonNull(name, "name");
		this.devicePool = devicePool;
		this.pinned = pinned;
		this.shelf = devicePool.shelf(maxBuffersPerKey);
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
	 * identity on {@code stream}, for kernels enqueued there after it; it is set aside once the stream's work
	 * has completed.
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
	 * @throws GpuOutOfMemoryException if the device pool has no memory for it
	 */
	public ReductionBuffer acquire(ElementType type, int slots, ReductionOp op, GpuStream stream) {
		ReductionKey key = new ReductionKey(type, slots, op);
		if (this.closed) {
			throw new IllegalStateException("reduction buffer cache '" + this.name + "' is closed");
		}
		SizeCounters counters = this.sizes.computeIfAbsent(key.bytes(), (size) -> new SizeCounters());
		counters.keys.add(key);
		counters.requests.increment();
		PooledBuffer pooled = this.shelf.take(key);
		if (pooled != null) {
			counters.hits.increment();
		}
		else {
			try {
				pooled = (stream != null) ? this.devicePool.acquire(key.bytes(), stream)
						: this.devicePool.acquire(key.bytes());
			}
			catch (GpuOutOfMemoryException ex) {
				this.allocationFailures.increment();
				throw ex;
			}
		}
		counters.lent(pooled.capacity());
		this.peakReservedBytes.accumulateAndGet(reservedBytes(), Math::max);
		ReductionBuffer buffer = new ReductionBuffer(this, key, pooled, stream);
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
		return MemoryKind.DEVICE;
	}

	/** Bytes of the buffers set aside. */
	@Override
	public long cachedBytes() {
		return this.shelf.cachedBytes();
	}

	/** Bytes of the buffers lent and set aside. */
	@Override
	public long reservedBytes() {
		long lent = 0;
		for (SizeCounters counters : this.sizes.values()) {
			lent += counters.inUseBytes.get();
		}
		return lent + cachedBytes();
	}

	/**
	 * Gives the buffers set aside back to the device pool, the least recently set aside first, until at most
	 * {@code keepBytes} stay.
	 * @return the bytes given back
	 */
	@Override
	public long trim(long keepBytes) {
		long released = this.shelf.trim(keepBytes);
		this.trimmedBytes.add(released);
		return released;
	}

	@Override
	public PoolStatistics statistics() {
		List<SizeClassStatistics> rows = new ArrayList<>();
		new TreeMap<>(this.sizes).forEach((size, counters) -> rows.add(counters.row(size, this.shelf)));
		return PoolStatistics.of(this.name, kind(), rows, PoolStatistics.AboveTopClass.NONE,
				PoolStatistics.Segments.NONE, 0, this.peakReservedBytes.get(), Long.MAX_VALUE, this.trimmedBytes.sum(),
				this.allocationFailures.sum(), 0, PoolStatistics.Waits.NONE);
	}

	/** Gives every buffer set aside back to the device pool; buffers still lent go back as they are closed. */
	@Override
	public void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		trim(0);
		this.shelf.close();
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

	/**
	 * Takes back a buffer whose stream's kernel may still write it: to the device pool after the stream's work, never
	 * onto the shelf, whose next request would reset it under the kernel.
	 */
	void releaseAfter(ReductionKey key, PooledBuffer pooled, GpuStream stream) {
		this.sizes.get(key.bytes()).returned(pooled.capacity());
		pooled.closeAfter(stream);
	}

	/** Sets a closed buffer's memory aside for its key, or gives it back to the device pool. */
	void release(ReductionKey key, PooledBuffer pooled) {
		long capacity = pooled.capacity();
		this.sizes.get(key.bytes()).returned(capacity);
		if (!this.shelf.put(key, pooled)) {
			this.trimmedBytes.add(capacity);
		}
	}

	/** The counts of one buffer size. */
	private static final class SizeCounters {

		final Set<ReductionKey> keys = ConcurrentHashMap.newKeySet();

		final LongAdder requests = new LongAdder();

		final LongAdder hits = new LongAdder();

		final LongAdder returns = new LongAdder();

		final AtomicLong inUse = new AtomicLong();

		final AtomicLong inUseBytes = new AtomicLong();

		void lent(long capacity) {
			this.inUse.incrementAndGet();
			this.inUseBytes.addAndGet(capacity);
		}

		void returned(long capacity) {
			this.returns.increment();
			this.inUse.decrementAndGet();
			this.inUseBytes.addAndGet(-capacity);
		}

		SizeClassStatistics row(long size, BufferShelf shelf) {
			long cached = 0;
			long cachedBytes = 0;
			for (ReductionKey key : this.keys) {
				cached += shelf.count(key);
				cachedBytes += shelf.cachedBytes(key);
			}
			long requests = this.requests.sum();
			long hits = this.hits.sum();
			return new SizeClassStatistics(size, requests, hits, requests - hits, this.returns.sum(), this.inUse.get(),
					this.inUseBytes.get(), cached, cachedBytes);
		}

	}

}
