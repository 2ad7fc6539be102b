package io.gpumem.benchmarks;

import java.util.List;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;

import io.gpumem.allocator.StatisticsAllocator;
import io.gpumem.backend.GpuBackend;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;
import io.gpumem.pool.diagnostics.BufferRecording;
import io.gpumem.pool.diagnostics.HistoryConfig;

/** Something the {@link ServiceWorkload} takes its buffers from: gpumem's pool, Netty's, or the backend alone. */
abstract class Lender implements AutoCloseable {

	/** Every lender the workload compares, by the name its {@code --lenders} option takes: those it runs by default. */
	static final List<String> NAMES = List.of("gpumem", "gpumem-fixed", "gpumem-cuda-async", "netty", "netty-cache",
			"backend");

	/**
	 * Lenders run only where named, to explain another's figures: gpumem's pool with the history recording no
	 * buffer, and {@code spin-<nanoseconds>}, which spends that long in each acquire and release and shares nothing,
	 * so that its p99 is what the machine gives an acquire of that length.
	 */
	static final List<String> DIAGNOSTIC = List.of("gpumem-unrecorded", Spin.PREFIX + "<nanoseconds>");

	/** The system property that sets the mapping step of {@link #workload()}. */
	static final String MAPPING_STEP = "gpumem.mapping-step";

	private final String name;

	Lender(String name) {
		this.name = name;
	}

	/**
	 * The default configuration of gpumem's pool over expandable segments, but for the mapping step where the system
	 * property {@value #MAPPING_STEP} names one in bytes (given to forked runs through {@code JAVA_TOOL_OPTIONS}), to
	 * measure another.
	 */
	static PoolConfig.Builder workload() {
		PoolConfig.Builder builder = PoolConfig.builder("workload");
		Long step = Long.getLong(MAPPING_STEP);
		return (step != null) ? builder.mappingStep(step) : builder;
	}

	static Lender create(String name, GpuBackend backend) {
		MemoryAllocator arena = backend.virtualMemory().allocatorOr(backend.allocator(MemoryKind.DEVICE));
		return switch (name) {
			case "gpumem" -> new Pool(name, arena, workload().build());
			case "gpumem-unrecorded" -> new Pool(name, arena, workload()
				.history(new HistoryConfig(BufferRecording.OFF, HistoryConfig.DEFAULT_EVENTS))
				.build());
			case "gpumem-fixed" -> new Pool(name, backend.allocator(MemoryKind.DEVICE),
					PoolConfig.builder("workload").build());
			case "gpumem-cuda-async" -> new Pool(name, backend.streamOrderedAllocator(),
					PoolConfig.builder("workload").build());
			case "netty" -> new Netty(name, new PooledByteBufAllocator(true));
			case "netty-cache" -> new Netty(name, Netty.withCacheForAllThreads());
			case "backend" -> new Backend(name, backend.allocator(MemoryKind.DEVICE));
			default -> {
				if (name.startsWith(Spin.PREFIX)) {
					yield new Spin(name, Long.parseLong(name.substring(Spin.PREFIX.length())));
				}
				throw new IllegalArgumentException("unknown lender '" + name + "'; lenders are " + NAMES + " and "
						+ DIAGNOSTIC);
			}
		};
	}

	String name() {
		return this.name;
	}

	abstract Object acquire(long bytes);

	/** Writes {@code payload} at the start of a buffer, as a request fills its inputs. */
	abstract void write(Object buffer, byte[] payload);

	abstract void release(Object buffer);

	/** What the lender holds from the device now. */
	abstract long heldBytes();

	/** The most the lender held at once, where it keeps that figure exactly; 0 otherwise. */
	long peakHeldBytes() {
		return 0;
	}

	/** Calls to the backend's allocator so far, or -1 where the lender cannot say. */
	long freshAllocations() {
		return -1;
	}

	/** Trims everything cached, from a thread that did not serve requests, and answers what is still held. */
	abstract long heldAfterTrim();

	@Override
	public abstract void close();

	/** A lender over one of the backend's device allocators, whose calls it counts exactly. */
	abstract static class OverBackend extends Lender {

		final StatisticsAllocator allocator;

		OverBackend(String name, MemoryAllocator allocator) {
			super(name);
			this.allocator = new StatisticsAllocator(allocator);
		}

		@Override
		long peakHeldBytes() {
			return this.allocator.statistics().peakBytes();
		}

		@Override
		long freshAllocations() {
			return this.allocator.statistics().totalCount();
		}

	}

	/** gpumem's pool over a device allocator of the backend: the arena's, or CUDA's stream-ordered pool. */
	static final class Pool extends OverBackend {

		private final StratifiedMemoryPool pool;

		Pool(String name, MemoryAllocator allocator, PoolConfig config) {
			super(name, allocator);
			this.pool = new StratifiedMemoryPool(this.allocator, config);
		}

		@Override
		Object acquire(long bytes) {
			return this.pool.acquire(bytes);
		}

		@Override
		void write(Object buffer, byte[] payload) {
			((PooledBuffer) buffer).copyFrom(0, payload, 0, payload.length);
		}

		@Override
		void release(Object buffer) {
			((PooledBuffer) buffer).close();
		}

		@Override
		long heldBytes() {
			return this.pool.reservedBytes();
		}

		@Override
		long heldAfterTrim() {
			this.pool.trim(0);
			return this.pool.reservedBytes();
		}

		@Override
		public void close() {
			this.pool.close();
		}

	}

	/** Netty's pooled direct buffers. */
	static final class Netty extends Lender {

		private final PooledByteBufAllocator allocator;

		Netty(String name, PooledByteBufAllocator allocator) {
			super(name);
			this.allocator = allocator;
		}

		/** Netty's defaults, but with its thread cache for every thread, not only for Netty's own. */
		static PooledByteBufAllocator withCacheForAllThreads() {
			return new PooledByteBufAllocator(true, PooledByteBufAllocator.defaultNumHeapArena(),
					PooledByteBufAllocator.defaultNumDirectArena(), PooledByteBufAllocator.defaultPageSize(),
					PooledByteBufAllocator.defaultMaxOrder(), PooledByteBufAllocator.defaultSmallCacheSize(),
					PooledByteBufAllocator.defaultNormalCacheSize(), true);
		}

		@Override
		Object acquire(long bytes) {
			return this.allocator.directBuffer((int) bytes);
		}

		@Override
		void write(Object buffer, byte[] payload) {
			((ByteBuf) buffer).setBytes(0, payload);
		}

		@Override
		void release(Object buffer) {
			((ByteBuf) buffer).release();
		}

		@Override
		long heldBytes() {
			return this.allocator.metric().usedDirectMemory();
		}

		@Override
		long heldAfterTrim() {
			this.allocator.trimCurrentThreadCache();
			return heldBytes();
		}

		@Override
		public void close() {
		}

	}

	/** The backend's device allocator with no pool: every acquire allocates, every release frees. */
	static final class Backend extends OverBackend {

		Backend(String name, MemoryAllocator allocator) {
			super(name, allocator);
		}

		@Override
		Object acquire(long bytes) {
			return this.allocator.allocate(bytes);
		}

		@Override
		void write(Object buffer, byte[] payload) {
			((Allocation) buffer).copyFromHost(0, payload, 0, payload.length, ElementType.BYTE);
		}

		@Override
		void release(Object buffer) {
			this.allocator.free((Allocation) buffer);
		}

		@Override
		long heldBytes() {
			return this.allocator.statistics().currentBytes();
		}

		@Override
		long heldAfterTrim() {
			return heldBytes();
		}

		@Override
		public void close() {
		}

	}

	/** A lender that spends a fixed time in each acquire and release, touching nothing another thread does. */
	static final class Spin extends Lender {

		static final String PREFIX = "spin-";

		private final long nanos;

		Spin(String name, long nanos) {
			super(name);
			this.nanos = nanos;
		}

		private void spin() {
			ServiceWorkload.Hold.SPIN.hold(this.nanos);
		}

		@Override
		Object acquire(long bytes) {
			spin();
			return this;
		}

		@Override
		void write(Object buffer, byte[] payload) {
		}

		@Override
		void release(Object buffer) {
			spin();
		}

		@Override
		long heldBytes() {
			return 0;
		}

		@Override
		long heldAfterTrim() {
			return 0;
		}

		@Override
		public void close() {
		}

	}

}
