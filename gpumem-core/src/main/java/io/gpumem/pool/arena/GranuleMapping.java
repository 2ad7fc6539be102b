package io.gpumem.pool.arena;

import java.util.Set;
import java.util.function.BooleanSupplier;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.OutOfMemoryDiagnostic;

/**
 * The driver's calls that map and unmap the granules of an {@link Arena}'s expandable segments, made outside the
 * arena's lock on granules claimed under it and marked busy meanwhile, so that no thread waits on the lock behind the
 * driver: frees and fits go on while a thread maps. The thread that maps (one at a time, {@link Arena#allocate})
 * waits on the arena's monitor for the granules of its span that another thread is unmapping, unless the arena sleeps,
 * when it leaves for the arena to be woken first ({@link Asleep}); a thread that has taken granules out waits on none,
 * so no two wait on each other.
 */
final class GranuleMapping {

	/** The arena, whose lock guards the granules. */
	private final Arena arena;

	/** The arena's segments, guarded by its lock. */
	private final Set<Span.Segment> segments;

	private final MemoryAllocator allocator;

	/** The unmaps under way. */
	private final UnderWay unmaps = new UnderWay();

	GranuleMapping(Arena arena, Set<Span.Segment> segments, MemoryAllocator allocator) {
		this.arena = arena;
		this.segments = segments;
		this.allocator = allocator;
	}

	/**
	 * Maps the granules a lent span touches that are not mapped, with the rest of their steps where the device gives
	 * them ({@link Granules}), those ahead free since {@code stamp}. Free granules stay mapped until a trim: a request
	 * unmaps none to make room first, since on a GPU each is a driver call of tens of microseconds and the granule is
	 * soon wanted again. The driver's calls are made outside the lock, on granules claimed under it once no other
	 * thread unmaps them; where the device refuses the span's own granules while unmaps are under way, or after some
	 * ended, it tries again once as many bytes are unmapped as were then under way.
	 * @throws GpuOutOfMemoryException naming the span's bytes and the device's free memory once its granules are back,
	 * where the device refuses one
	 * @throws Asleep where the arena sleeps, for it to wake before it maps anything
	 */
	void map(Span span, long stamp) {
		try {
			mapGranules(span, stamp);
		}
		catch (GpuOutOfMemoryException ex) {
			OutOfMemoryDiagnostic refused = ex.diagnostic();
			throw new GpuOutOfMemoryException(OutOfMemoryDiagnostic.of(refused.kind(), span.size,
					this.allocator.memoryInfo(), refused.limitBytes(), refused.reason()), ex);
		}
	}

	private void mapGranules(Span span, long stamp) {
		Granules granules = span.segment.granules;
		Granules.Claim claim;
		synchronized (this.arena) {
			long from = span.offset;
			long to = from + span.size;
			await(this.arena, () -> this.arena.asleep() || !granules.busy(from, to));
			if (this.arena.asleep()) {
				throw Asleep.INSTANCE;
			}
			claim = granules.claim(from, to, stamp);
		}
		if (claim.isEmpty()) {
			return;
		}
		try {
			mapClaimed(granules, claim);
		}
		finally {
			synchronized (this.arena) {
				this.arena.hold(granules.settle(claim));
				this.arena.notifyAll();
			}
		}
	}

	/** Maps what {@code claim} holds: its steps whole, else the span's own granules, again once unmaps end. */
	private void mapClaimed(Granules granules, Granules.Claim claim) {
		long ended = this.unmaps.ended();
		if (claim.ahead()) {
			try {
				granules.map(claim, true, this.allocator);
				return;
			}
			catch (GpuOutOfMemoryException ex) {
				// the span's own granules may fit where the step did not
			}
		}
		try {
			granules.map(claim, false, this.allocator);
		}
		catch (GpuOutOfMemoryException ex) {
			if (!this.unmaps.awaitUnderWay(ended)) {
				throw ex;
			}
			granules.map(claim, false, this.allocator);
		}
	}

	/**
	 * Unmaps runs of granules free since {@code cutoff}, until they cover {@code bytes}: taken out under the lock
	 * ({@link #takeFree}), unmapped outside it.
	 * @return the bytes unmapped
	 * @throws RuntimeException as the driver refuses, the runs it did not unmap mapped and held again
	 */
	long unmapFree(long bytes, long cutoff) {
		Unmapping unmapping = new Unmapping();
		synchronized (this.arena) {
			takeFree(bytes, cutoff, unmapping);
		}
		unmap(unmapping);
		return unmapping.bytes();
	}

	/** Waits until no granule of the arena is being mapped or unmapped: at close, before its ranges go back. */
	void awaitSettled() {
		synchronized (this.arena) {
			await(this.arena, () -> this.segments.stream().allMatch((segment) -> segment.granules.settled()));
		}
	}

	/**
	 * Takes out the granules lying wholly in free spans since {@code cutoff}, segment by segment, until they cover
	 * {@code bytes}, for {@code into} to unmap, under the lock: they count as held no more, but as under way.
	 */
	private void takeFree(long bytes, long cutoff, Unmapping into) {
		long before = into.bytes();
		long taken = 0;
		for (Span.Segment segment : this.segments) {
			taken += segment.takeFree(bytes - taken, cutoff, into);
		}
		if (taken > 0) {
			this.arena.hold(-taken);
			this.unmaps.add(into.bytes() - before);
		}
	}

	/**
	 * Unmaps the granules taken out, outside the lock, then settles them under it, those the driver refused to unmap
	 * mapped and held again.
	 */
	private void unmap(Unmapping unmapping) {
		if (unmapping.bytes() == 0) {
			return;
		}
		try {
			unmapping.run(this.allocator);
		}
		finally {
			synchronized (this.arena) {
				this.arena.hold(unmapping.settle());
				this.arena.notifyAll();
			}
			this.unmaps.add(-unmapping.bytes());
		}
	}

	/** Waits on {@code monitor}, which the caller holds, until {@code done}, keeping an interrupt for later. */
	private static void await(Object monitor, BooleanSupplier done) {
		boolean interrupted = false;
		while (!done.getAsBoolean()) {
			try {
				monitor.wait();
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
	 * Thrown where a request would map while the arena sleeps: its span may lie on a granule asleep, which only a wake
	 * maps again, and a sleep gives the device back all the arena maps.
	 */
	static final class Asleep extends RuntimeException {

		static final Asleep INSTANCE = new Asleep();

		private Asleep() {
			super("the arena sleeps", null, false, false);
		}

	}

	/**
	 * The bytes the arena has taken out to unmap and not yet unmapped: memory the device still holds that the pool no
	 * longer counts, which a map the device refuses meanwhile waits for before it tries again.
	 */
	static final class UnderWay {

		private long bytes;

		/** The bytes whose unmap has ended, ever. */
		private long ended;

		/** Counts {@code bytes} taken out to unmap, or where negative, unmapped. */
		synchronized void add(long bytes) {
			this.bytes += bytes;
			if (bytes < 0) {
				this.ended -= bytes;
				notifyAll();
			}
		}

		/** The bytes whose unmap has ended, ever: a mark for {@link #awaitUnderWay}. */
		synchronized long ended() {
			return this.ended;
		}

		/**
		 * Waits until as many bytes have been unmapped as are under way now, not for unmaps begun meanwhile, which
		 * could keep a busy pool's request waiting for ever; answers whether any were under way or have ended since
		 * the mark {@code ended} ({@link #ended()}).
		 */
		synchronized boolean awaitUnderWay(long ended) {
			long target = this.ended + this.bytes;
			await(this, () -> this.ended >= target);
			return target > ended;
		}

	}

}
