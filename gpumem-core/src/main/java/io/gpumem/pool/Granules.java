package io.gpumem.pool;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.gpumem.memory.AddressRange;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryAllocator;

/**
 * An expandable segment's memory: a reserved address range and the physical memory mapped into it, one allocation
 * a granule, so that any granule can go back on its own (PyTorch's expandable segments). Guarded by the arena's
 * lock.
 */
final class Granules {

	final AddressRange range;

	private final long granule;

	private final Allocation[] mapped;

	/** Per granule, when a span touching it was last freed, on the pool's clock: an idle trim's measure. */
	private final long[] freeSince;

	private long mappedBytes;

	Granules(AddressRange range, long granule) {
		this.range = range;
		this.granule = granule;
		this.mapped = new Allocation[Math.toIntExact(range.size() / granule)];
		this.freeSince = new long[this.mapped.length];
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

	/**
	 * Maps every unmapped granule that {@code [from, to)} touches, each with memory of its own from {@code allocator}.
	 * @return the bytes newly mapped
	 * @throws RuntimeException as the allocator or the range refuses, once those this call mapped are unmapped again
	 */
	long map(long from, long to, MemoryAllocator allocator) {
		List<Integer> added = new ArrayList<>();
		try {
			for (int g = first(from); g <= last(to); g++) {
				if (this.mapped[g] == null) {
					Allocation physical = allocator.allocate(this.granule);
					try {
						this.range.map(g * this.granule, physical);
					}
					catch (RuntimeException ex) {
						allocator.free(physical);
						throw ex;
					}
					this.mapped[g] = physical;
					added.add(g);
				}
			}
		}
		catch (RuntimeException ex) {
			added.forEach((g) -> unmap(g, allocator));
			throw ex;
		}
		this.mappedBytes += added.size() * this.granule;
		return added.size() * this.granule;
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
	 * Unmaps and frees the mapped granules that lie wholly in {@code [from, to)} and were freed at {@code cutoff} or
	 * before, in address order, until they cover {@code bytes}.
	 * @return the bytes given back
	 */
	long unmapWithin(long from, long to, long bytes, long cutoff, MemoryAllocator allocator) {
		long released = 0;
		for (long g = firstWithin(from); endsBy(g, to) && released < bytes; g++) {
			if (this.mapped[(int) g] != null && this.freeSince[(int) g] <= cutoff) {
				unmap((int) g, allocator);
				released += this.granule;
			}
		}
		this.mappedBytes -= released;
		return released;
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

	private void unmap(int g, MemoryAllocator allocator) {
		Allocation physical = this.mapped[g];
		this.range.unmap(g * this.granule, physical);
		this.mapped[g] = null;
		allocator.free(physical);
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
