package io.gpumem.pool;

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
	 * Maps the {@code claimed} granules, each with memory of its own from {@code allocator}: driver calls, made
	 * outside the lock, that change nothing here.
	 * @throws RuntimeException as the allocator or the range refuses, once those this call mapped are unmapped again
	 */
	Allocation[] map(int[] claimed, MemoryAllocator allocator) {
		Allocation[] physical = new Allocation[claimed.length];
		int done = 0;
		try {
			for (; done < claimed.length; done++) {
				physical[done] = allocator.allocate(this.granule);
				try {
					this.range.map(claimed[done] * this.granule, physical[done]);
				}
				catch (RuntimeException ex) {
					allocator.free(physical[done]);
					throw ex;
				}
			}
		}
		catch (RuntimeException ex) {
			for (int i = 0; i < done; i++) {
				unmap(claimed[i], physical[i], allocator);
			}
			throw ex;
		}
		return physical;
	}

	/**
	 * Ends a claim: the granules mapped with {@code physical}, or unmapped as before where it is null (the map failed).
	 * @return the bytes newly mapped
	 */
	long settle(int[] claimed, Allocation[] physical) {
		for (int i = 0; i < claimed.length; i++) {
			this.mapped[claimed[i]] = (physical != null) ? physical[i] : null;
			clearBusy(claimed[i]);
		}
		long bytes = (physical != null) ? claimed.length * this.granule : 0;
		this.mappedBytes += bytes;
		return bytes;
	}

	/** Notes that {@code [from, to)} was freed at {@code stamp}: every granule it touches is free since then at most. */
	void freed(long from, long to, long stamp) {
		for (int g = first(from); g <= last(to); g++) {
			this.freeSince[g] = stamp;
		}
	}

	/** Bytes of the mapped granules that lie wholly in {@code [from, to)}. */
	long mappedWithin(long from, long to) {
		long bytes = 0;
		for (long g = firstWithin(from); endsBy(g, to); g++) {
			bytes += (this.mapped[(int) g] != null) ? this.granule : 0;
		}
		return bytes;
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

	/** Unmaps granule {@code g} from {@code physical}, which is then freed: a driver call, made outside the lock. */
	void unmap(int g, Allocation physical, MemoryAllocator allocator) {
		this.range.unmap(g * this.granule, physical);
		allocator.free(physical);
	}

	/** Ends what {@link #takeFree} began: granule {@code g} unmapped, or mapped to {@code physical} again. */
	long settleUnmap(int g, Allocation physical) {
		this.mapped[g] = physical;
		clearBusy(g);
		long bytes = (physical != null) ? this.granule : 0;
		this.mappedBytes += bytes;
		return bytes;
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
