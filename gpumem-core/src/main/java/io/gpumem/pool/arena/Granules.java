package io.gpumem.pool.arena;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.gpumem.memory.AddressRange;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryAllocator;

/**
 * An expandable segment's memory: a reserved address range and the physical memory mapped into it, in runs of
 * granules each one allocation, so that any run can go back on its own (PyTorch's expandable segments). A run lies
 * within one step of the range, a whole step where the device gives it: a span that maps a granule maps the rest of
 * its step ahead, with one call, as PyTorch's large pool maps 20 MiB pages, and only its own granules where the device
 * refuses the step. Guarded by the arena's lock, but for the driver's calls, which the arena makes outside it on
 * granules marked busy meanwhile.
 */
final class Granules {

	final AddressRange range;

	private final long granule;

	/** How many granules a step holds: the most a run maps. */
	private final int step;

	/** Per granule, the allocation of the run mapped at it, which every granule of the run shares; null if unmapped. */
	private final Allocation[] mapped;

	/** Per granule, when a span touching it was last freed, on the pool's clock: an idle trim's measure. */
	private final long[] freeSince;

	/** Per granule, whether a thread maps or unmaps it outside the arena's lock. */
	private final boolean[] busy;

	private int busyCount;

	private long mappedBytes;

	/** The granules of {@code range}, of {@code granule} bytes each, mapped in runs of at most {@code step} bytes. */
	Granules(AddressRange range, long granule, long step) {
		this.range = range;
		this.granule = granule;
		this.step = (int) Math.max(1, step / granule);
		this.mapped = new Allocation[Math.toIntExact(range.size() / granule)];
		this.freeSince = new long[this.mapped.length];
		this.busy = new boolean[this.mapped.length];
	}

	/** A view of {@code bytes} from granule {@code g}, which must be mapped while it is used. */
	Allocation view(int g, long bytes) {
		return this.range.slice(g * this.granule, bytes);
	}

	/**
	 * Maps a run of {@code bytes} from granule {@code g}, claimed by the caller, with memory of its own from
	 * {@code allocator}: driver calls, made outside the lock, that change nothing here until the caller
	 * {@link #settle settles} it.
	 * @throws RuntimeException as the allocator or the range refuses, the memory given back
	 */
	Allocation mapRun(int g, long bytes, MemoryAllocator allocator) {
		Allocation memory = allocator.allocate(bytes);
		try {
			this.range.map(g * this.granule, memory);
		}
		catch (RuntimeException ex) {
			allocator.free(memory);
			throw ex;
		}
		return memory;
	}

	/** Bytes of the granules mapped. */
	long mappedBytes() {
		return this.mappedBytes;
	}

	/** Whether every granule that {@code [from, to)} touches is mapped. */
	boolean mapped(long from, long to) {
		return unmappedBytes(from, to) == 0;
	}

	/** Bytes of the granules that {@code [from, to)} touches and that are not mapped. */
	long unmappedBytes(long from, long to) {
		long unmapped = 0;
		for (int g = first(from); g <= last(to); g++) {
			unmapped += (this.mapped[g] == null) ? this.granule : 0;
		}
		return unmapped;
	}

	/** Whether a granule that {@code [from, to)} touches is being mapped or unmapped outside the arena's lock. */
	boolean busy(long from, long to) {
		for (int g = first(from); g <= last(to) && this.busyCount > 0; g++) {
			if (this.busy[g]) {
				return true;
			}
		}
		return false;
	}

	/** Whether no granule is being mapped or unmapped outside the arena's lock. */
	boolean settled() {
		return this.busyCount == 0;
	}

	/**
	 * Claims each unmapped granule that {@code [from, to)} touches, none of them {@link #busy}, and the unmapped
	 * granules not busy in the rest of their steps, for the caller to map outside the lock ({@link #map}) and then
	 * {@link #settle}: no other call touches a claimed granule meanwhile. Those ahead count free since {@code stamp}.
	 */
	Claim claim(long from, long to, long stamp) {
		assert !busy(from, to);
		int first = first(from);
		int last = last(to);
		int start = first / this.step * this.step;
		int end = Math.min(this.mapped.length, (last / this.step + 1) * this.step);
		int[] claimed = new int[end - start];
		int count = 0;
		int needed = 0;
		for (int g = start; g < end; g++) {
			boolean touched = g >= first && g <= last;
			if (this.mapped[g] == null && (touched || !this.busy[g])) {
				markBusy(g);
				claimed[count++] = g;
				needed += touched ? 1 : 0;
				this.freeSince[g] = touched ? this.freeSince[g] : stamp;
			}
		}
		return new Claim(Arrays.copyOf(claimed, count), first, last, needed);
	}

	/**
	 * Maps the granules of {@code claim} in runs, each with memory of its own from {@code allocator}, into its
	 * {@link Claim#physical}, where {@code ahead} every granule claimed, else those its span touches: driver calls,
	 * made outside the lock, that change nothing here. Where one fails, the runs mapped before are unmapped again, and
	 * each left null but one whose unmap failed too.
	 * @throws RuntimeException as the allocator or the range refuses; where an unmap again is refused too, that
	 * refusal, not an out-of-memory a caller would try again after, the failures before it suppressed
	 */
	void map(Claim claim, boolean ahead, MemoryAllocator allocator) {
		int[] granules = claim.granules;
		Allocation[] physical = claim.physical;
		List<Integer> runs = new ArrayList<>();
		try {
			for (int i = 0; i < granules.length;) {
				if (!ahead && !claim.touches(granules[i])) {
					i++;
					continue;
				}
				int end = i + 1;
				while (end < granules.length && granules[end] == granules[end - 1] + 1
						&& granules[end] % this.step != 0 && (ahead || claim.touches(granules[end]))) {
					end++;
				}
				Allocation memory = mapRun(granules[i], (end - i) * this.granule, allocator);
				Arrays.fill(physical, i, end, memory);
				runs.add(i);
				i = end;
			}
		}
		catch (RuntimeException ex) {
			RuntimeException failure = ex;
			for (int i : runs) {
				Allocation memory = physical[i];
				try {
					unmap(granules[i], memory);
					allocator.free(memory);
					for (int j = i; j < granules.length && physical[j] == memory; j++) {
						physical[j] = null;
					}
				}
				catch (RuntimeException unmapping) {
					unmapping.addSuppressed(failure);
					failure = unmapping;
				}
			}
			throw failure;
		}
	}

	/**
	 * Ends a {@link #claim}: each granule mapped to its {@link Claim#physical}, or unmapped where that is null.
	 * @return the bytes left mapped
	 */
	long settle(Claim claim) {
		long bytes = 0;
		for (int i = 0; i < claim.granules.length; i++) {
			bytes += settle(claim.granules[i], claim.physical[i]);
		}
		return bytes;
	}

	/**
	 * Ends a {@link #takeFree} of the run of {@code bytes} from granule {@code g}, or a wake's map of it: each of its
	 * granules mapped to {@code physical}, or unmapped where that is null.
	 * @return the bytes left mapped
	 */
	long settleRun(int g, long bytes, Allocation physical) {
		long mapped = 0;
		for (int i = g; i < g + bytes / this.granule; i++) {
			mapped += settle(i, physical);
		}
		return mapped;
	}

	private long settle(int g, Allocation physical) {
		this.mapped[g] = physical;
		clearBusy(g);
		long bytes = (physical != null) ? this.granule : 0;
		this.mappedBytes += bytes;
		return bytes;
	}

	/** Notes that {@code [from, to)} was freed at {@code stamp}: every granule it touches is free since then at most. */
	void freed(long from, long to, long stamp) {
		for (int g = first(from); g <= last(to); g++) {
			this.freeSince[g] = stamp;
		}
	}

	/**
	 * Takes out the runs mapped that lie wholly in {@code [from, to)} and whose granules were all freed at
	 * {@code cutoff} or before, in address order, until they cover {@code bytes}, for {@code into} to unmap outside
	 * the lock: each counts unmapped from now, and busy until unmapped.
	 * @return the bytes taken out
	 */
	long takeFree(long from, long to, long bytes, long cutoff, Unmapping into) {
		long taken = 0;
		for (int g = (int) firstWithin(from); g < this.mapped.length && endsBy(g, to) && taken < bytes;) {
			Allocation run = this.mapped[g];
			if (run == null || (g > 0 && this.mapped[g - 1] == run)) {
				g++;
				continue;
			}
			int length = runLength(run);
			if (endsBy(g + length - 1, to) && freedBy(g, length, cutoff)) {
				into.add(this, g, run);
				for (int i = g; i < g + length; i++) {
					this.mapped[i] = null;
					markBusy(i);
				}
				taken += run.size();
			}
			g += length;
		}
		this.mappedBytes -= taken;
		return taken;
	}

	/** Unmaps the run mapped to {@code physical} from granule {@code g}: a driver call, made outside the lock. */
	void unmap(int g, Allocation physical) {
		this.range.unmap(g * this.granule, physical);
	}

	/** The stretches of mapped granules in address order, as {@code [start, end)} pairs: runs side by side join. */
	long[] runs() {
		long[] runs = new long[this.mapped.length + 1];
		int count = 0;
		for (int g = 0; g < this.mapped.length; g++) {
			if (this.mapped[g] != null && (g == 0 || this.mapped[g - 1] == null)) {
				runs[count++] = g * this.granule;
			}
			if (this.mapped[g] != null && (g + 1 == this.mapped.length || this.mapped[g + 1] == null)) {
				runs[count++] = (g + 1) * this.granule;
			}
		}
		return Arrays.copyOf(runs, count);
	}

	/** How many granules a run mapped to {@code physical} holds. */
	private int runLength(Allocation physical) {
		return (int) (physical.size() / this.granule);
	}

	/** Whether the {@code length} granules from {@code g} were all freed at {@code cutoff} or before. */
	private boolean freedBy(int g, int length, long cutoff) {
		for (int i = g; i < g + length; i++) {
			if (this.freeSince[i] > cutoff) {
				return false;
			}
		}
		return true;
	}

	private void markBusy(int g) {
		this.busy[g] = true;
		this.busyCount++;
	}

	private void clearBusy(int g) {
		this.busy[g] = false;
		this.busyCount--;
	}

	/** The first granule that starts at or after {@code from}. */
	private long firstWithin(long from) {
		return (from + this.granule - 1) / this.granule;
	}

	/** Whether granule {@code g} ends at or before {@code to}. */
	private boolean endsBy(int g, long to) {
		return (g + 1) * this.granule <= to;
	}

	private int first(long from) {
		return (int) (from / this.granule);
	}

	private int last(long to) {
		return (int) ((to - 1) / this.granule);
	}

	/**
	 * Granules claimed to map ({@link #claim}), in address order: those a span touches, from {@code first} to
	 * {@code last}, and the rest of their steps ahead; with the memory mapped to each, once {@link #map} has.
	 */
	static final class Claim {

		final int[] granules;

		final Allocation[] physical;

		private final int first;

		private final int last;

		/** How many of the granules claimed the span touches. */
		private final int touched;

		Claim(int[] granules, int first, int last, int touched) {
			this.granules = granules;
			this.physical = new Allocation[granules.length];
			this.first = first;
			this.last = last;
			this.touched = touched;
		}

		boolean isEmpty() {
			return this.granules.length == 0;
		}

		/** Whether granules are claimed beyond those the span touches. */
		boolean ahead() {
			return this.granules.length > this.touched;
		}

		boolean touches(int g) {
			return g >= this.first && g <= this.last;
		}

	}

}
