package io.gpumem.pool.arena;

import java.util.ArrayList;
import java.util.List;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;

/**
 * The granules of an arena's expandable segments that a sleep unmapped while spans in them were lent, each with its
 * bytes copied to host memory (the backend's pinned memory, or the Java heap where it has none or refuses) or
 * dropped, to be mapped again at the same offset when the arena wakes: the spans keep their addresses while the device
 * holds none of their memory (vLLM's sleep mode, torch_memory_saver). Each stays busy in its {@link Granules} while
 * asleep, so that nothing maps over it, and a request about to map anything while the arena sleeps wakes it first
 * ({@link Arena#allocate}). Guarded by its own monitor, which the arena takes before its lock, only to take granules
 * out and settle them.
 */
final class SleepingGranules {

	private final List<Asleep> asleep = new ArrayList<>();

	/** The host memory offloaded bytes go to; null for the Java heap. */
	private final MemoryAllocator host;

	/** Written under this object's monitor, read without it. */
	private volatile long offloadedBytes;

	/**
	 * Whether the arena sleeps: from a sleep's {@link #takeAll} to the end of the wake or to the close's
	 * {@link #drop}, whether or not the sleep put a run asleep; after a sleep that failed, as before it or where a run
	 * went asleep. Written and read under the arena's lock.
	 */
	private boolean sleeps;

	SleepingGranules(MemoryAllocator host) {
		this.host = host;
	}

	/**
	 * Takes out every mapped granule of {@code segments} into {@code unmapping}, under the arena's lock, for
	 * {@link #put} outside it.
	 * @return the bytes taken out
	 */
	long takeAll(Iterable<Span.Segment> segments, Unmapping unmapping) {
		long taken = 0;
		for (Span.Segment segment : segments) {
			if (segment.granules != null) {
				taken += segment.granules.takeFree(0, segment.size, Long.MAX_VALUE, Long.MAX_VALUE, unmapping);
			}
		}
		this.sleeps = true;
		return taken;
	}

	/**
	 * Whether the arena sleeps, under its lock: from a sleep's {@link #takeAll} to the wake, so that a request about to
	 * map meanwhile wakes the arena first rather than wait for its granules, map beside them, or map while it sleeps.
	 */
	boolean sleeps() {
		return this.sleeps;
	}

	/** The bytes of the granules asleep. */
	long bytes() {
		return this.asleep.stream().mapToLong(Asleep::bytes).sum();
	}

	/** The bytes of host memory holding the content of the granules asleep, read without the monitor. */
	long offloadedBytes() {
		return this.offloadedBytes;
	}

	/**
	 * Puts asleep the granules taken out into {@code unmapping} ({@link Granules#takeFree}): copies each one's bytes to
	 * host memory where {@code offload}, then unmaps and frees it, driver calls made outside the arena's lock; those
	 * the driver refused to unmap are settled mapped again, under it, their copies dropped. The arena sleeps from then
	 * on; where the sleep fails, it sleeps on only if it {@code sleptBefore} the take or a granule went asleep.
	 * @throws RuntimeException as the driver refuses, each granule unmapped before kept asleep
	 */
	void put(Unmapping unmapping, boolean offload, MemoryAllocator allocator, Arena arena, boolean sleptBefore) {
		List<Unmapping.Entry> entries = unmapping.entries();
		Offloaded[] copies = new Offloaded[entries.size()];
		boolean slept = false;
		try {
			for (int i = 0; offload && i < copies.length; i++) {
				Unmapping.Entry entry = entries.get(i);
				copies[i] = offload(entry.granules().view(entry.index(), entry.physical().size()));
			}
			unmapping.run(allocator);
			slept = true;
		}
		finally {
			for (int i = 0; i < unmapping.done(); i++) {
				Unmapping.Entry entry = entries.get(i);
				this.asleep.add(new Asleep(entry.granules(), entry.index(), entry.physical().size(), copies[i], null));
				this.offloadedBytes += (copies[i] != null) ? copies[i].bytes() : 0;
			}
			synchronized (arena) {
				arena.hold(unmapping.settleNotDone());
				this.sleeps = slept || sleptBefore || !this.asleep.isEmpty();
				arena.notifyAll();
			}
			for (int i = unmapping.done(); i < copies.length; i++) {
				if (copies[i] != null) {
					copies[i].free(this.host);
				}
			}
		}
	}

	/** A copy of a granule's bytes in host memory: pinned where the backend has it and gives it, else an array. */
	private Offloaded offload(Allocation granule) {
		long bytes = granule.size();
		Allocation pinned = pinned(bytes);
		if (pinned != null) {
			try {
				granule.copyTo(0, pinned, 0, bytes);
			}
			catch (RuntimeException ex) {
				this.host.free(pinned);
				throw ex;
			}
			return new Offloaded(pinned, null);
		}
		byte[] array = new byte[Math.toIntExact(bytes)];
		granule.copyToHost(0, array, 0, array.length, ElementType.BYTE);
		return new Offloaded(null, array);
	}

	/** {@code bytes} of the backend's pinned memory; null where it has none or refuses. */
	private Allocation pinned(long bytes) {
		try {
			return (this.host != null) ? this.host.allocate(bytes) : null;
		}
		catch (GpuOutOfMemoryException ex) {
			return null;
		}
	}

	/**
	 * Maps each granule asleep again at its offset, with memory of {@code allocator}, and copies its bytes back where
	 * they were offloaded: driver calls outside the arena's lock, each granule settled under it. The arena sleeps until
	 * the wake ends, none asleep included, and on where it fails.
	 * @return the bytes mapped again, and of them the bytes whose content was copied back
	 * @throws RuntimeException as the allocator or the driver refuses, those still asleep kept for the next wake
	 */
	long[] wake(MemoryAllocator allocator, Arena arena) {
		long mapped = 0;
		long restored = 0;
		while (!this.asleep.isEmpty()) {
			Asleep granule = this.asleep.get(this.asleep.size() - 1);
			Allocation physical = (granule.mapped != null) ? granule.mapped
					: granule.granules.mapRun(granule.index, granule.bytes, allocator);
			if (granule.copy != null) {
				copyBack(granule, physical, allocator, arena);
				restored += granule.copy.bytes();
				this.offloadedBytes -= granule.copy.bytes();
			}
			this.asleep.remove(this.asleep.size() - 1);
			synchronized (arena) {
				arena.hold(granule.granules.settleRun(granule.index, granule.bytes, physical) - granule.heldBytes());
				arena.notifyAll();
			}
			mapped += physical.size();
			if (granule.copy != null) {
				granule.copy.free(this.host);
			}
		}
		synchronized (arena) {
			this.sleeps = false;
		}
		return new long[] { mapped, restored };
	}

	/**
	 * Copies a granule's offloaded bytes into the memory just mapped for it; where that fails, unmaps it again, and
	 * where the driver refuses that too, keeps it asleep mapped, held by {@code arena}, for the next wake to copy into.
	 * @throws RuntimeException the copy's failure, or the refused unmap with the copy's failure suppressed in it
	 */
	private void copyBack(Asleep granule, Allocation physical, MemoryAllocator allocator, Arena arena) {
		try {
			granule.copy.copyInto(granule.granules.view(granule.index, granule.bytes));
		}
		catch (RuntimeException ex) {
			if (granule.mapped != null) {
				throw ex;
			}
			try {
				granule.granules.unmap(granule.index, physical);
			}
			catch (RuntimeException unmapping) {
				this.asleep.set(this.asleep.size() - 1, granule.mappedTo(physical));
				synchronized (arena) {
					arena.hold(physical.size());
				}
				unmapping.addSuppressed(ex);
				throw unmapping;
			}
			allocator.free(physical);
			throw ex;
		}
	}

	/**
	 * Drops every granule asleep and its copy, a close: each settled under the arena's lock unmapped, or mapped where
	 * a wake left it so, for the close to give back with the rest.
	 */
	void drop(Arena arena) {
		synchronized (arena) {
			this.asleep.forEach((granule) -> granule.granules.settleRun(granule.index, granule.bytes, granule.mapped));
			this.sleeps = false;
			arena.notifyAll();
		}
		this.asleep.forEach((granule) -> {
			if (granule.copy != null) {
				granule.copy.free(this.host);
			}
		});
		this.asleep.clear();
		this.offloadedBytes = 0;
	}

	/**
	 * A run of granules asleep, from granule {@code index}: the copy of its bytes where offloaded, else null; the
	 * memory mapped to it where a wake could neither copy the bytes back nor unmap it again, else null.
	 */
	private record Asleep(Granules granules, int index, long bytes, Offloaded copy, Allocation mapped) {

		Asleep mappedTo(Allocation physical) {
			return new Asleep(this.granules, this.index, this.bytes, this.copy, physical);
		}

		/** The bytes the arena holds of it: those mapped to it. */
		long heldBytes() {
			return (this.mapped != null) ? this.mapped.size() : 0;
		}

	}

	/** A granule's bytes in host memory: pinned memory, or an array of the Java heap. */
	private record Offloaded(Allocation pinned, byte[] array) {

		long bytes() {
			return (this.pinned != null) ? this.pinned.size() : this.array.length;
		}

		void copyInto(Allocation granule) {
			if (this.pinned != null) {
				this.pinned.copyTo(0, granule, 0, this.pinned.size());
			}
			else {
				granule.copyFromHost(0, this.array, 0, this.array.length, ElementType.BYTE);
			}
		}

		void free(MemoryAllocator host) {
			if (this.pinned != null) {
				host.free(this.pinned);
			}
		}

	}

}
