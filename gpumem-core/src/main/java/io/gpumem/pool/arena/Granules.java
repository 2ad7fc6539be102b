package io.gpumem.pool.arena;

import java.util.Arrays;

import io.gpumem.memory.AddressRange;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryAllocator;

/**
 * An expandable segment's memory: a reserved address range and the physical memory mapped into it, one allocation
 * a granule, so that any granule can go back on its own (PyTorch's expandable segments). Guarded by the arena's
 * lock, but for the driver's calls, which the arena makes outside it on granules marked busy meanwhile.
 */
final class Granules {

	final AddressRange range;

	private final long granule;

	private final Allocation[] mapped;

	/** Per granule, when a span touching it was last freed, on the pool's clock: an idle trim's measure. */
	private final long[] freeSince;

	/** Per granule, whether a thread maps or unmaps it outside the arena's lock. */
	private final boolean[] busy;

	private int busyCount;

	private long mappedBytes;

	Granules(AddressRange range, long granule) {
		this.range = range;
		this.granule = granule;
		this.mapped = new Allocation[Math.toIntExact(range.size() / granule)];
		this.freeSince = new long[this.mapped.length];
		this.busy = new boolean[this.mapped.length];
	}

	/** The bytes of a granule. */
	long granule() {
		return this.granule;
	}

	/** A view of granule {@code g}, which must be mapped while it is used. */
	Allocation view(int g) {
		return this.range.slice(g * this.granule, this.granule);
	}

	/**
	 * Maps granule {@code g}, claimed by the caller, with memory of its own from {@code allocator}: driver calls,
	 * made outside the lock, that change nothing here until the caller {@link #settle settles} it.
	 * @throws RuntimeException as the allocator or the range refuses, the memory given back
	 */
	Allocation mapOne(int g, MemoryAllocator allocator) {
		Allocation[] physical = new Allocation[1];
		map(new int[] { g }, physical, allocator);
		return physical[0];
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
	 * Claims each unmapped granule that {@code [from, to)} touches, none of them {@link #busy}, for the caller to map
	 * outside the lock ({@link #map}) and then {@link #settle}: no other call touches a claimed granule meanwhile.
	 */
	int[] claim(long from, long to) {
		assert !busy(from, to);
		int[] claimed = new int[last(to) - first(from) + 1];
		int count = 0;
		for (int g = first(from); g <= last(to); g++) {
			if (this.mapped[g] == null) {
				markBusy(g);
				claimed[count++] = g;
			}
		}
		return Arrays.copyOf(claimed, count);
	}

	/**
	 * Maps the {@code claimed} granules, each with memory of its own from {@code allocator}, into {@code physical}:
	 * driver calls, made outside the lock, that change nothing here. Where one fails, those mapped before are unmapped
	 * again, and each left null in {@code physical} but one whose unmap failed too.
	 * @throws RuntimeException as the allocator or the range refuses, with the unmaps' failures suppressed
	 */
	void map(int[] claimed, Allocation[] physical, MemoryAllocator allocator) {
		int done = 0;
		try {
			for (; done < claimed.length; done++) {
				Allocation memory = allocator.allocate(this.granule);
				try {
					this.range.map(claimed[done] * this.granule, memory);
				}
				catch (RuntimeException ex) {
					allocator.free(memory);
					throw ex;
				}
				physical[done] = memory;
			}
		}
		catch (RuntimeException ex) {
			for (int i = 0; i < done; i++) {
				try {
					unmap(claimed[i], physical[i]);
					allocator.free(physical[i]);
					physical[i] = null;
				}
				catch (RuntimeException unmapping) {
					ex.addSuppressed(unmapping);
				}
			}
			throw ex;
		}
	}

	/**
	 * Ends a claim or a {@link #takeFree}: each granule mapped to its {@code physical}, or unmapped where that is null.
	 * @return the bytes left mapped
	 */
	long settle(int[] granules, Allocation[] physical) {
		long bytes = 0;
		for (int i = 0; i < granules.length; i++) {
			bytes += settle(granules[i], physical[i]);
		}
		return bytes;
	}

	/** Ends a claim or a {@link #takeFree} of granule {@code g}: see {@link #settle(int[], Allocation[])}. */
	long settle(int g, Allocation physical) {
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
	 * Takes out the mapped granules that lie wholly in {@code [from, to)} and were freed at {@code cutoff} or before,
	 * in address order, until they cover {@code bytes}, for {@code into} to unmap outside the lock: each counts
	 * unmapped from now, and busy until unmapped.
	 * @return the bytes taken out
	 */
	long takeFree(long from, long to, long bytes, long cutoff, Unmapping into) {
		long taken = 0;
		for (long g = firstWithin(from); endsBy(g, to) && taken < bytes; g++) {
			int i = (int) g;
			if (this.mapped[i] != null && this.freeSince[i] <= cutoff) {
				into.add(this, i, this.mapped[i]);
				this.mapped[i] = null;
				markBusy(i);
				taken += this.granule;
			}
		}
		this.mappedBytes -= taken;
		return taken;
	}

	/** Unmaps granule {@code g}, mapped to {@code physical}: a driver call, made outside the lock. */
	void unmap(int g, Allocation physical) {
		this.range.unmap(g * this.granule, physical);
	}

	/** The runs of mapped granules in address order, as {@code [start, end)} pairs. */
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
	private boolean endsBy(long g, long to) {
		return (g + 1) * this.granule <= to;
	}

	private int first(long from) {
		return (int) (from / this.granule);
	}

	private int last(long to) {
		return (int) ((to - 1) / this.granule);
	}

}
