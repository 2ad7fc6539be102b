package io.gpumem.pool;

import java.util.Set;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryAllocator;

/**
 * The driver's calls that map and unmap the granules of an {@link Arena}'s expandable segments, made outside the
 * arena's lock on granules claimed under it and marked busy meanwhile, so that no thread waits on the lock behind the
 * driver: frees and fits go on while a thread maps. A thread that needs a busy granule waits on the arena's monitor
 * until it settles; a thread that has claimed granules waits on none, so no two wait on each other.
 */
final class GranuleMapping {

	/** The arena, whose lock guards the granules. */
	private final Arena arena;

	/** The arena's segments, guarded by its lock. */
	private final Set<Span.Segment> segments;

	private final MemoryAllocator allocator;

	private final long granule;

	GranuleMapping(Arena arena, Set<Span.Segment> segments, MemoryAllocator allocator, long granule) {
		this.arena = arena;
		this.segments = segments;
		this.allocator = allocator;
		this.granule = granule;
	}

	/**
	 * Maps the granules a lent span touches that are not mapped, once as many lying wholly in free spans are unmapped,
	 * so that memory is held where it is lent, not in holes no request fits. The driver's calls are made outside the
	 * lock, on granules claimed under it once no other thread maps or unmaps them.
	 */
	void map(Span span) {
		Granules granules = span.segment.granules;
		long from = span.offset;
		long to = from + span.size;
		int[] claimed;
		Unmapping room = new Unmapping();
		synchronized (this.arena) {
			awaitSettled(granules, from, to);
			claimed = granules.claim(from, to);
			takeFree(claimed.length * this.granule, Long.MAX_VALUE, room);
		}
		Allocation[] physical = null;
		try {
			unmap(room);
			physical = (claimed.length > 0) ? granules.map(claimed, this.allocator) : physical;
		}
		finally {
			if (claimed.length > 0) {
				synchronized (this.arena) {
					this.arena.hold(granules.settle(claimed, physical));
					this.arena.notifyAll();
				}
			}
		}
	}

	/** Waits, under the lock, until no other thread maps or unmaps a granule that {@code [from, to)} touches. */
	private void awaitSettled(Granules granules, long from, long to) {
		boolean interrupted = false;
		while (granules.busy(from, to)) {
			try {
				this.arena.wait();
			}
			catch (InterruptedException ex) {
				interrupted = true;
			}
		}
		if (interrupted) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Unmaps granules free since {@code cutoff}, until they cover {@code bytes}: taken out under the lock
	 * ({@link #takeFree}), unmapped outside it.
	 */
	long unmapFree(long bytes, long cutoff) {
		Unmapping unmapping = new Unmapping();
		long taken;
		synchronized (this.arena) {
			taken = takeFree(bytes, cutoff, unmapping);
		}
		return taken - unmap(unmapping);
	}

	/**
	 * Takes out the granules lying wholly in free spans since {@code cutoff}, segment by segment, until they cover
	 * {@code bytes}, for {@code into} to unmap, under the lock: they count as held no more.
	 */
	private long takeFree(long bytes, long cutoff, Unmapping into) {
		long taken = 0;
		for (Span.Segment segment : this.segments) {
			taken += segment.takeFree(bytes - taken, cutoff, into);
		}
		this.arena.hold(-taken);
		return taken;
	}

	/** Unmaps the granules taken out, outside the lock, then settles them under it: answers the bytes still mapped. */
	private long unmap(Unmapping unmapping) {
		if (unmapping.isEmpty()) {
			return 0;
		}
		long mapped = 0;
		try {
			unmapping.run(this.allocator);
		}
		finally {
			synchronized (this.arena) {
				mapped = unmapping.settle();
				this.arena.hold(mapped);
				this.arena.notifyAll();
			}
		}
		return mapped;
	}

}
