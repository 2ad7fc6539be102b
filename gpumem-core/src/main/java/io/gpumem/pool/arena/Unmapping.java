package io.gpumem.pool.arena;

import java.util.ArrayList;
import java.util.List;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.MemoryAllocator;

/**
 * Runs of granules of an arena's expandable segments taken out under its lock ({@link Granules#takeFree}), to unmap
 * outside it, so that no thread waits on the lock behind the driver.
 */
final class Unmapping {

	private final List<Entry> entries = new ArrayList<>();

	/** How many of the entries {@link #run} has unmapped. */
	private int done;

	private long bytes;

	void add(Granules granules, int index, Allocation physical) {
		this.entries.add(new Entry(granules, index, physical));
		this.bytes += physical.size();
	}

	/** The bytes of the runs taken out. */
	long bytes() {
		return this.bytes;
	}

	/**
	 * Unmaps and frees each run: driver calls, made outside the lock.
	 * @throws RuntimeException as the driver refuses; the runs not unmapped then stay mapped ({@link #settle})
	 */
	void run(MemoryAllocator allocator) {
		while (this.done < this.entries.size()) {
			Entry entry = this.entries.get(this.done);
			entry.granules.unmap(entry.index, entry.physical);
			this.done++;
			allocator.free(entry.physical);
		}
	}

	/**
	 * Ends the unmapping, under the lock: each run unmapped, or mapped still where {@link #run} stopped before it.
	 * @return the bytes still mapped
	 */
	long settle() {
		long mapped = 0;
		for (int i = 0; i < this.entries.size(); i++) {
			Entry entry = this.entries.get(i);
			mapped += entry.granules.settleRun(entry.index, entry.physical.size(), (i < this.done) ? null : entry.physical);
		}
		return mapped;
	}

	/**
	 * Settles mapped still, under the lock, the runs {@link #run} stopped before; leaves those it unmapped busy,
	 * for a sleep to keep ({@link SleepingGranules}).
	 * @return the bytes still mapped
	 */
	long settleNotDone() {
		long mapped = 0;
		for (int i = this.done; i < this.entries.size(); i++) {
			Entry entry = this.entries.get(i);
			mapped += entry.granules.settleRun(entry.index, entry.physical.size(), entry.physical);
		}
		return mapped;
	}

	/** The granules taken out, in order. */
	List<Entry> entries() {
		return this.entries;
	}

	/** How many of the entries, the first, {@link #run} has unmapped. */
	int done() {
		return this.done;
	}

	/** A run taken out: its segment's granules, the index there of its first and the memory mapped at it. */
	record Entry(Granules granules, int index, Allocation physical) {
	}

}
