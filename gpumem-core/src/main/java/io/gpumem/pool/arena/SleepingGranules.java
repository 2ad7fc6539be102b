package io.gpumem.pool.arena;

import java.util.ArrayList;
import java.util.List;

import io.gpumem.memory.Allocation;
import io.gpumem.memory.ElementType;
import io.gpumem.memory.MemoryAllocator;

/**
 * The granules of an arena's expandable segments that a sleep unmapped while spans in them were lent, each with its
 * bytes copied to host memory or dropped, to be mapped again at the same offset when the arena wakes: the spans keep
 * their addresses while the device holds none of their memory (vLLM's sleep mode, torch_memory_saver). Each stays
 * busy in its {@link Granules} while asleep, so that a thread mapping a span over it waits for the wake. Guarded by
 * its own monitor, which the arena takes before its lock, only to take granules out and settle them.
 */
final class SleepingGranules {

	private final List<Asleep> asleep = new ArrayList<>();

	private long offloadedBytes;

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
		return taken;
	}

	/** The bytes of the granules asleep. */
	long bytes() {
		return this.asleep.stream().mapToLong((granule) -> granule.granules.granule()).sum();
	}

	/** The bytes of host memory holding the content of the granules asleep. */
	long offloadedBytes() {
		return this.offloadedBytes;
	}

	/**
	 * Puts asleep the granules taken out into {@code unmapping} ({@link Granules#takeFree}): copies each one's bytes to
	 * host memory where {@code offload}, then unmaps and frees it, driver calls made outside the arena's lock; those
	 * the driver refused to unmap are settled mapped again, under it.
	 * @return the bytes the driver refused to unmap
	 * @throws RuntimeException as the driver refuses, each granule unmapped before kept asleep
	 */
	long put(Unmapping unmapping, boolean offload, MemoryAllocator allocator, Arena arena) {
		List<Unmapping.Entry> entries = unmapping.entries();
		byte[][] contents = new byte[entries.size()][];
		try {
			for (int i = 0; offload && i < contents.length; i++) {
				Unmapping.Entry entry = entries.get(i);
				contents[i] = new byte[Math.toIntExact(entry.physical().size())];
				entry.granules().view(entry.index()).copyToHost(0, contents[i], 0, contents[i].length, ElementType.BYTE);
			}
			unmapping.run(allocator);
		}
		finally {
			for (int i = 0; i < unmapping.done(); i++) {
				Unmapping.Entry entry = entries.get(i);
				this.asleep.add(new Asleep(entry.granules(), entry.index(), contents[i]));
				this.offloadedBytes += (contents[i] != null) ? contents[i].length : 0;
			}
			synchronized (arena) {
				arena.hold(unmapping.settleNotDone());
				arena.notifyAll();
			}
		}
		return unmapping.bytes() - unmapping.doneBytes();
	}

	/**
	 * Maps each granule asleep again at its offset, with memory of {@code allocator}, and copies its bytes back where
	 * they were offloaded: driver calls outside the arena's lock, each granule settled under it.
	 * @return the bytes mapped again, and of them the bytes whose content was copied back
	 * @throws RuntimeException as the allocator or the driver refuses, those still asleep kept for the next wake
	 */
	long[] wake(MemoryAllocator allocator, Arena arena) {
		long mapped = 0;
		long restored = 0;
		while (!this.asleep.isEmpty()) {
			Asleep granule = this.asleep.get(this.asleep.size() - 1);
			Allocation physical = granule.granules.mapOne(granule.index, allocator);
			if (granule.content != null) {
				granule.granules.view(granule.index)
					.copyFromHost(0, granule.content, 0, granule.content.length, ElementType.BYTE);
				restored += granule.content.length;
				this.offloadedBytes -= granule.content.length;
			}
			this.asleep.remove(this.asleep.size() - 1);
			synchronized (arena) {
				arena.hold(granule.granules.settle(granule.index, physical));
				arena.notifyAll();
			}
			mapped += physical.size();
		}
		return new long[] { mapped, restored };
	}

	/** Drops every granule asleep, settled unmapped under the arena's lock: a close, which maps none again. */
	void drop(Arena arena) {
		synchronized (arena) {
			this.asleep.forEach((granule) -> granule.granules.settle(granule.index, null));
			arena.notifyAll();
		}
		this.asleep.clear();
		this.offloadedBytes = 0;
	}

	/** A granule asleep: its content where it was offloaded, else null. */
	private record Asleep(Granules granules, int index, byte[] content) {
	}

}
