package io.gpumem.benchmarks;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.LeakDetection;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.pool.diagnostics.BufferRecording;
import io.gpumem.pool.diagnostics.HistoryConfig;

/**
 * One acquire and release of a buffer: gpumem's pool hit, against Netty's pooled direct buffers (with
 * its default settings, which cache per thread only for Netty's own threads, and with its thread cache
 * on for every thread), allocating and freeing straight from the host backend, and a single shared
 * lock-free free list. Run with {@code -t 1} and {@code -t 2} to see the cost per operation as threads
 * are added.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class PoolHitBenchmark {

	@Param({ "256", "4096", "65536", "1048576", "16777216" })
	public int size;

	@Param({ "SIMPLE" })
	public LeakDetection leakDetection;

	@Param({ "LARGE" })
	public BufferRecording buffers;

	/** The pool's segments: expandable (the default configuration on the host backend) or fixed. */
	@Param({ "expandable" })
	public String segments;

	private MemoryAllocator backend;

	private StratifiedMemoryPool pool;

	private final AtomicReference<Node> sharedList = new AtomicReference<>();

	private PooledByteBufAllocator nettyDefault;

	private PooledByteBufAllocator nettyThreadCache;

	@Setup(Level.Trial)
	public void setUp() {
		HostBackend host = new HostBackend(8L << 30);
		this.backend = host.allocator(MemoryKind.DEVICE);
		this.pool = new StratifiedMemoryPool(
				this.segments.equals("fixed") ? this.backend : host.virtualMemory().allocator(),
				PoolConfig.builder("bench")
					.leakDetection(this.leakDetection)
					.history(new HistoryConfig(this.buffers, HistoryConfig.DEFAULT_EVENTS))
					.maxCachedBytes(4L << 30)
					.build());
		this.nettyDefault = new PooledByteBufAllocator(true);
		this.nettyThreadCache = new PooledByteBufAllocator(true, PooledByteBufAllocator.defaultNumHeapArena(),
				PooledByteBufAllocator.defaultNumDirectArena(), PooledByteBufAllocator.defaultPageSize(),
				PooledByteBufAllocator.defaultMaxOrder(), PooledByteBufAllocator.defaultSmallCacheSize(),
				PooledByteBufAllocator.defaultNormalCacheSize(), true);
		for (int i = 0; i < 8; i++) {
			this.sharedList.set(new Node(this.backend.allocate(this.size), this.sharedList.get()));
		}
	}

	@TearDown(Level.Trial)
	public void tearDown() {
		this.pool.close();
	}

	@Benchmark
	public long gpumemPoolHit() {
		return PoolHit.acquireAndRelease(this.pool, this.size);
	}

	/** The same, with the buffer handed to a black hole, as a real caller's would escape its method. */
	@Benchmark
	public void gpumemPoolHitEscaping(Blackhole blackhole) {
		PooledBuffer buffer = this.pool.acquire(this.size);
		blackhole.consume(buffer);
		buffer.close();
	}

	@Benchmark
	public int nettyPooledDefault() {
		return allocateRelease(this.nettyDefault);
	}

	@Benchmark
	public int nettyPooledThreadCache() {
		return allocateRelease(this.nettyThreadCache);
	}

	private int allocateRelease(PooledByteBufAllocator allocator) {
		ByteBuf buffer = allocator.directBuffer(this.size, this.size);
		int capacity = buffer.capacity();
		buffer.release();
		return capacity;
	}

	@Benchmark
	public long backendAllocateFree() {
		Allocation allocation = this.backend.allocate(this.size);
		long capacity = allocation.size();
		this.backend.free(allocation);
		return capacity;
	}

	@Benchmark
	public long sharedLockFreeList() {
		Node node;
		do {
			node = this.sharedList.get();
		}
		while (node == null || !this.sharedList.compareAndSet(node, node.next));
		long capacity = node.allocation.size();
		Node head;
		do {
			head = this.sharedList.get();
			node.next = head;
		}
		while (!this.sharedList.compareAndSet(head, node));
		return capacity;
	}

	/** A Treiber stack node; reused, as a free list's would be. */
	static final class Node {

		final Allocation allocation;

		Node next;

		Node(Allocation allocation, Node next) {
			this.allocation = allocation;
			this.next = next;
		}

	}

}
