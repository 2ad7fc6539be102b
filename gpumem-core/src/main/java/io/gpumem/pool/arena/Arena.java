package io.gpumem.pool.arena;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.IntPredicate;

import io.gpumem.memory.AddressSpace;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;

/**
 * The tier behind a pool's size classes: segments cut into spans ({@link FreeSpans}), so that memory freed by one
 * size serves any other (PyTorch's caching allocator, RMM's coalescing pool). Over an allocator with an
 * {@link AddressSpace}, a segment is a reserved range whose granules are mapped as its spans are lent, in runs of a
 * step ({@link Granules}): it grows at its end with no segment boundary to fragment on, and a trim gives back every
 * free run, wherever it lies (PyTorch's expandable segments); over any other, an allocation, given back only whole.
 * One lock guards the spans, for every thread, as PyTorch's allocator has one per device: on a GPU, where each
 * request waits for copies and kernels, one lock holds less and waits less than a lock per group of threads, each
 * holding memory of its own. The driver's calls are made outside it ({@link GranuleMapping}): granules are mapped and
 * segments made by one thread at a time, while those that find no mapped fit meanwhile look again before they grow
 * too, so that frees and takes of mapped spans never wait behind the driver.
 */
public final class Arena extends Padding implements Tier {

	/** Spans start at multiples of this and their sizes are multiples of it: the alignment {@code cuMemAlloc} gives. */
	public static final long ALIGNMENT = 256;

	private final SegmentSource source;

	private final ArenaCounters counters;

	/** The driver's calls on the granules of its ranges, made outside the lock; null over fixed segments. */
	private final GranuleMapping mapping;

	/** The blocks cut here, per class: written under the lock. */
	private final ReservedBlocks reserved;

	/**
	 * Held while a request looks for a fit to map, maps it or makes a segment, those waiting looking again first; and
	 * while a sleep takes out what is mapped, so that no map is under way then.
	 */
	private final Object growing = new Object();

	/** Every segment held, in the order made. */
	private final Set<Span.Segment> segments = new LinkedHashSet<>();

	/** The granules a sleep unmapped under lent spans, mapped again at a wake; guarded by its own monitor. */
	private final SleepingGranules sleeping;

	/**
	 * What a request that would map while the arena sleeps runs first, with no lock held: the pool's wake, or its
	 * refusal.
	 */
	private final Runnable wakeBeforeMapping;

	private volatile boolean closed;

	/** Bytes held of the device: the segments' allocations, or their ranges' mapped granules. */
	private volatile long segmentBytes;

	/** Bytes of the segments, mapped or not: those not mapped lie in free spans. */
	private volatile long addressBytes;

	/** The step ranges of {@code granularity}-byte granules map in for {@code step}: whole granules, one at least. */
	public static long mappingStep(long step, long granularity) {
		return Math.max(1, step / granularity) * granularity;
	}

	/**
	 * An arena of the segments {@link SegmentSource} makes, in steps of {@code segmentStep} bytes where they are
	 * allocations, or ranges mapped a granule at a time where the free lists {@code keeps} a class's blocks and in
	 * steps of {@code mappingStep} ({@link #mappingStep}) for the others, in ranges apart; a request that would map
	 * while it sleeps wakes it first.
	 */
	public Arena(MemoryAllocator allocator, long segmentStep, long mappingStep, ArenaCounters counters,
			IntPredicate keeps) {
		this(allocator, segmentStep, mappingStep, counters, keeps, null);
	}

	/**
	 * As {@link #Arena(MemoryAllocator, long, long, ArenaCounters, IntPredicate)}, a request that would map while the
	 * arena sleeps running {@code wakeBeforeMapping} first: a wake, or a refusal it throws.
	 */
	public Arena(MemoryAllocator allocator, long segmentStep, long mappingStep, ArenaCounters counters,
			IntPredicate keeps, Runnable wakeBeforeMapping) {
		this.source = new SegmentSource(allocator, segmentStep, mappingStep, keeps);
		this.sleeping = new SleepingGranules((this.source.space != null) ? this.source.space.offloadMemory() : null);
		this.mapping = expandable() ? new GranuleMapping(this, this.segments, allocator) : null;
		this.counters = counters;
		this.reserved = counters.reserved();
		this.wakeBeforeMapping = (wakeBeforeMapping != null) ? wakeBeforeMapping : this::wake;
	}

	/** The bytes a request of {@code bytes} takes in a segment. */
	public static long spanSize(long bytes) {
		return (bytes + ALIGNMENT - 1) & -ALIGNMENT;
	}

	/** Whether blocks of the class are cut from the free spans blocks above the free lists' classes go back to. */
	public boolean cutBesideLarger(int classIndex) {
		return this.source.spans(classIndex) == this.source.others;
	}

	/** Whether segments are ranges whose granules are mapped as needed. */
	public boolean expandable() {
		return this.source.space != null;
	}

	/** A block of at least {@code size} bytes for the class, cut from a free span held already; null when none fits. */
	@Override
	public Block take(int classIndex, long size, int home) {
		return takeBlock(classIndex, spanSize(size), true, true, 0);
	}

	/**
	 * A block of at least {@code size} bytes for the class: cut from a free span, with its granules mapped where
	 * they are not, else from a new segment; granules mapped ahead of it count free since {@code stamp}. One thread at
	 * a time maps or grows, while the others wait and then look again for what was freed meanwhile; frees and takes of
	 * mapped spans go on. A request that would map while the arena sleeps wakes it first, as a sleep gives the
	 * device back all the arena maps.
	 * @throws GpuOutOfMemoryException if the allocator refuses the memory, even a segment of the span's size
	 * @throws RuntimeException as the wake before mapping fails or refuses
	 */
	public Block allocate(int classIndex, long size, long stamp) {
		long spanSize = spanSize(size);
		Block block = takeBlock(classIndex, spanSize, true, false, stamp);
		while (block == null) {
			try {
				block = mapOrGrow(classIndex, spanSize, stamp);
			}
			catch (GranuleMapping.Asleep ex) {
				this.wakeBeforeMapping.run();
			}
		}
		return block;
	}

	/** A block of {@code spanSize} bytes for the class, mapped or from a new segment, by one thread at a time. */
	private Block mapOrGrow(int classIndex, long spanSize, long stamp) {
		synchronized (this.growing) {
			Block block = takeBlock(classIndex, spanSize, true, false, stamp);
			block = (block != null || !expandable()) ? block : takeBlock(classIndex, spanSize, false, false, stamp);
			return (block != null) ? block
					: cutFromNew(this.source.make(spanSize, this.source.spans(classIndex)), classIndex, spanSize, stamp);
		}
	}

	/**
	 * Makes room for {@code count} free spans of {@code size} bytes, a warm-up: new segments, or granules mapped by
	 * lending the spans and freeing them at {@code stamp}.
	 * @throws GpuOutOfMemoryException if the allocator refuses (what was made before stays)
	 */
	public void grow(long size, int count, long stamp) {
		if (expandable()) {
			List<Block> blocks = new ArrayList<>();
			try {
				for (int i = 0; i < count; i++) {
					blocks.add(allocate(Block.ABOVE_TOP_CLASS, size, stamp));
				}
			}
			finally {
				blocks.forEach((block) -> free(block.span, stamp));
			}
			return;
		}
		long spanSize = spanSize(size);
		long perSegment = this.source.segmentSize(spanSize) / spanSize;
		for (long left = count; left > 0; left -= perSegment) {
			Span.Segment segment = this.source.make(Math.min(left, perSegment) * spanSize,
					this.source.spans(Block.ABOVE_TOP_CLASS));
			synchronized (this) {
				addSegment(segment);
			}
		}
	}

	/** Frees the block's span at {@code stamp} ({@link #free}). */
	@Override
	public boolean giveBack(Block block, int home, long stamp, boolean cache) {
		free(block.span, stamp);
		return true;
	}

	/** Takes back the blocks a tier above lets go of, free since {@code cutoff}, then releases as {@link #release}. */
	public long giveBackAll(List<Block> blocks, long bytes, long cutoff) {
		blocks.forEach((block) -> free(block.span, cutoff));
		return release(bytes, cutoff);
	}

	/**
	 * Gives memory free since {@code cutoff} back until it covers {@code bytes}: whole free segments, the longest held
	 * first, or the runs of granules lying wholly in free spans, in address order, then each range with nothing
	 * mapped.
	 */
	@Override
	public long release(long bytes, long cutoff) {
		long released = expandable() ? this.mapping.unmapFree(bytes, cutoff) : 0;
		for (Span.Segment segment : removeFree(bytes, cutoff)) {
			released += segment.release(this.source.allocator);
		}
		this.counters.countTrimmed(released);
		return released;
	}

	/**
	 * Bytes free in the memory held: held less booked, read without the lock, held first, as a span is booked before
	 * its granules are mapped; a new fixed segment counts free until its first span is cut.
	 */
	@Override
	public long cachedBytes() {
		return Math.max(0, this.segmentBytes - this.reserved.bytes());
	}

	/**
	 * Gives the device back what is free and, over expandable segments, once the work the device was given has
	 * completed, every mapped run of lent spans, whose addresses stay theirs, each run's bytes copied to host memory
	 * first where {@code offload} (the space's {@link AddressSpace#offloadMemory()}), else dropped, for {@link #wake}
	 * to map again; a request that would map meanwhile wakes the arena first ({@link #allocate}). A run the driver
	 * refuses to unmap stays mapped. Over fixed segments, gives back what is free only.
	 * @return the bytes given back to the device, and of them the bytes offloaded
	 * @throws IllegalStateException where the arena was closed as the sleep began, having given back what is free and
	 * put nothing asleep: a close drops what sleeps, and nothing would drop what a later sleep put asleep
	 * @throws RuntimeException as the driver refuses, every granule unmapped before asleep
	 */
	public long[] sleep(boolean offload) {
		long released = release(Long.MAX_VALUE, Long.MAX_VALUE);
		if (!expandable()) {
			return new long[] { released, 0 };
		}
		this.source.space.awaitDeviceWork();
		synchronized (this.sleeping) {
			if (this.closed) {
				throw new IllegalStateException("the arena was closed as its sleep began: nothing was put asleep");
			}
			long offloadedBefore = this.sleeping.offloadedBytes();
			Unmapping unmapping = new Unmapping();
			boolean sleptBefore;
			synchronized (this.growing) {
				synchronized (this) {
					sleptBefore = this.sleeping.sleeps();
					hold(-this.sleeping.takeAll(this.segments, unmapping));
				}
			}
			this.sleeping.put(unmapping, offload, this.source.allocator, this, sleptBefore);
			return new long[] { released + unmapping.bytes(),
					this.sleeping.offloadedBytes() - offloadedBefore };
		}
	}

	/**
	 * Maps again at their offsets the granules a sleep unmapped, copying their bytes back where they were offloaded.
	 * @return the bytes mapped again, and of them the bytes copied back
	 * @throws RuntimeException as the allocator or the driver refuses, the granules not woken kept for the next wake
	 */
	public long[] wake() {
		if (!expandable()) {
			return new long[] { 0, 0 };
		}
		synchronized (this.sleeping) {
			return this.sleeping.wake(this.source.allocator, this);
		}
	}

	/** The bytes of host memory holding the content of the granules asleep: read while a sleep or a wake runs too. */
	public long offloadedBytes() {
		return this.sleeping.offloadedBytes();
	}

	/** The bytes of the granules asleep: unmapped by a sleep under lent spans, not yet woken. */
	public long sleepingBytes() {
		if (!expandable()) {
			return 0;
		}
		synchronized (this.sleeping) {
			return this.sleeping.bytes();
		}
	}

	/**
	 * Whether the arena sleeps, read under the lock: from the sleep that takes out what is mapped to the wake that maps
	 * it again, granules asleep or none; never over fixed segments.
	 */
	public synchronized boolean asleep() {
		return this.sleeping.sleeps();
	}

	/** Gives back what is free, once the granules another thread maps or unmaps are settled; drops those asleep. */
	@Override
	public void close() {
		this.closed = true;
		if (expandable()) {
			synchronized (this.sleeping) {
				this.sleeping.drop(this);
			}
			this.mapping.awaitSettled();
		}
		release(Long.MAX_VALUE, Long.MAX_VALUE);
	}

	/** Blocks of a class the free lists keep, lent or kept. */
	public long keptBuffers(int classIndex) {
		return this.reserved.buffers(classIndex);
	}

	/** The memory held in pieces, in the order made: each segment whole, or each run of mapped granules. */
	public synchronized List<Span.Piece> pieces() {
		List<Span.Piece> pieces = new ArrayList<>();
		this.segments.forEach((segment) -> pieces.addAll(segment.pieces()));
		return pieces;
	}

	/** The addresses reserved for expandable segments; 0 for segments that are allocations. */
	public long addressBytes() {
		return expandable() ? this.addressBytes : 0;
	}

	/** Gives back the ranges with nothing mapped, as a new one whose granules could not be mapped. */
	private void releaseEmptyRanges() {
		removeFree(0, Long.MIN_VALUE).forEach((segment) -> segment.release(this.source.allocator));
	}

	/** A block cut from a free span of at least {@code size} bytes ({@link FreeSpans#fit}); null when none fits. */
	private Block takeBlock(int classIndex, long size, boolean mappedOnly, boolean hit, long stamp) {
		Span lent;
		boolean map;
		synchronized (this) {
			Span fit = this.source.spans(classIndex).fit(size, mappedOnly);
			lent = (fit != null) ? lend(fit.segment.spans.cut(fit, size), classIndex, hit) : null;
			map = lent != null && !mappedOnly && !lent.mapped();
		}
		return (lent != null) ? blockOf(lent, map, stamp) : null;
	}

	/**
	 * A span just cut, lent, booked before its granules are mapped ({@link #cachedBytes}), and for a {@code hit}
	 * counted as the class's use where this arena never held more of them ({@link ArenaCounters#countUse}). Its
	 * granules are mapped and its block made by the caller once it has let go of the lock ({@link #blockOf}).
	 */
	private Span lend(Span span, int classIndex, boolean hit) {
		boolean most = this.reserved.add(classIndex, 1, span.size);
		span.lend(classIndex);
		if (most && hit) {
			this.counters.countUse(classIndex, false);
		}
		return span;
	}

	/** A block cut from a new segment; a range is given back again if its granules cannot be mapped. */
	private Block cutFromNew(Span.Segment segment, int classIndex, long spanSize, long stamp) {
		try {
			Span lent;
			boolean map;
			synchronized (this) {
				lent = lend(segment.spans.cut(addSegment(segment), spanSize), classIndex, false);
				map = !lent.mapped();
			}
			return blockOf(lent, map, stamp);
		}
		catch (RuntimeException ex) {
			if (segment.granules != null) {
				releaseEmptyRanges();
			}
			throw ex;
		}
	}

	/**
	 * The lent span's block, made outside the lock once its granules are mapped where they were not, as seen under it
	 * ({@code map}); where that fails (the device is full or failed), the span is freed again.
	 */
	private Block blockOf(Span lent, boolean map, long stamp) {
		try {
			if (map) {
				this.mapping.map(lent, stamp);
			}
			return lent.block();
		}
		catch (RuntimeException ex) {
			free(lent, lent.freeSince);
			throw ex;
		}
	}

	/** Frees a lent span at {@code stamp}, coalesced, and unbooks it; once closed, gives back what falls free. */
	private void free(Span span, long stamp) {
		synchronized (this) {
			long size = span.size;
			span.segment.spans.free(span, stamp);
			this.reserved.add(span.classIndex, -1, size);
		}
		if (this.closed) {
			release(Long.MAX_VALUE, Long.MAX_VALUE);
		}
	}

	/** Bytes held of the device: a recent value. */
	public long segmentBytes() {
		return this.segmentBytes;
	}

	/** Counts {@code bytes} more held of the device (fewer where negative), under the lock. */
	void hold(long bytes) {
		this.segmentBytes += bytes;
	}

	/** Adds a segment as one free span, and answers that span. */
	private Span addSegment(Span.Segment segment) {
		this.segments.add(segment);
		hold(segment.heldBytes());
		this.addressBytes += segment.size;
		Span whole = new Span(segment, 0, segment.size);
		segment.spans.add(whole);
		return whole;
	}

	/**
	 * Takes out the whole free segments to give back: ranges with nothing mapped, and allocations free since
	 * {@code cutoff} on the pool's clock, the longest held first, until they cover {@code bytes}.
	 */
	private synchronized List<Span.Segment> removeFree(long bytes, long cutoff) {
		List<Span.Segment> removed = new ArrayList<>();
		long covered = 0;
		for (var it = this.segments.iterator(); it.hasNext();) {
			Span.Segment segment = it.next();
			if (segment.first.wholeFreeSegment() && ((segment.granules != null)
					? segment.heldBytes() == 0 && segment.granules.settled()
					: covered < bytes && segment.first.freeSince <= cutoff)) {
				it.remove();
				segment.spans.remove(segment.first);
				this.addressBytes -= segment.size;
				hold(-segment.heldBytes());
				covered += segment.heldBytes();
				removed.add(segment);
			}
		}
		return removed;
	}

}
