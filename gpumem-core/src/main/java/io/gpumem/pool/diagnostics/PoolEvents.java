package io.gpumem.pool.diagnostics;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

import io.gpumem.observation.MemoryObserver;

/**
 * A pool's flight-recorder events, so that JDK Mission Control shows GPU memory next to the heap's: misses,
 * out-of-memory failures, trims, and each block the pool allocates from or frees to its allocator. Each costs
 * a check of a flag when the recorder does not record it, and none is on the hit path.
 */
final class PoolEvents {

	private PoolEvents() {
	}

	/** Records a segment of {@code bytes} that {@code pool} allocated from, or freed to, its allocator. */
	static void segment(String pool, long bytes, boolean allocated) {
		SegmentEvent event = allocated ? new SegmentAllocated() : new SegmentReleased();
		if (event.shouldCommit()) {
			event.pool = pool;
			event.bytes = bytes;
			event.commit();
		}
	}

	/** A miss's event, its duration begun. */
	static Miss missBegins() {
		Miss event = new Miss();
		event.begin();
		return event;
	}

	/** Ends a miss of {@code bytes} from {@code pool}, and records it. */
	static void missEnds(Miss event, String pool, String kind, long bytes, boolean failed) {
		event.end();
		if (event.shouldCommit()) {
			event.pool = pool;
			event.kind = kind;
			event.bytes = bytes;
			event.failed = failed;
			event.commit();
		}
	}

	/** Records an acquire of {@code bytes} from {@code pool} that failed for want of memory. */
	static void outOfMemory(String pool, long bytes, String message) {
		OutOfMemory event = new OutOfMemory();
		if (event.shouldCommit()) {
			event.pool = pool;
			event.bytes = bytes;
			event.message = message;
			event.commit();
		}
	}

	/** Records a trim of {@code pool} down to {@code keepBytes} that released {@code releasedBytes}. */
	static void trimmed(String pool, long keepBytes, long releasedBytes, boolean idle) {
		Trim event = new Trim();
		if (event.shouldCommit()) {
			event.pool = pool;
			event.keepBytes = keepBytes;
			event.releasedBytes = releasedBytes;
			event.idle = idle;
			event.commit();
		}
	}

	/** An acquire that made the pool allocate: its duration is the time the miss took, retries and waits included. */
	@Name("io.gpumem.Miss")
	@Label("Pool Miss")
	@Category(MemoryObserver.JFR_CATEGORY)
	@Description("An acquire the pool's cache could not serve, which went to the allocator")
	static final class Miss extends Event {

		@Label("Pool")
		String pool;

		@Label("Memory Kind")
		String kind;

		@Label("Bytes")
		@DataAmount
		long bytes;

		@Label("Failed")
		boolean failed;

	}

	/** An acquire that failed for want of memory, after retries, waits and last resorts. */
	@Name("io.gpumem.OutOfMemory")
	@Label("Out of Memory")
	@Category(MemoryObserver.JFR_CATEGORY)
	@Description("An acquire that failed for good for want of memory")
	static final class OutOfMemory extends Event {

		@Label("Pool")
		String pool;

		@Label("Bytes")
		@DataAmount
		long bytes;

		@Label("Message")
		String message;

	}

	/**
	 * A trim that released memory: one a user, the out-of-memory path or the pressure handler asked for, or the
	 * idle trim.
	 */
	@Name("io.gpumem.Trim")
	@Label("Pool Trim")
	@Category(MemoryObserver.JFR_CATEGORY)
	@Description("A trim of the pool's cache, and the bytes it gave back to the allocator")
	@StackTrace(false)
	static final class Trim extends Event {

		@Label("Pool")
		String pool;

		@Label("Kept Bytes")
		@DataAmount
		long keepBytes;

		@Label("Released Bytes")
		@DataAmount
		long releasedBytes;

		@Label("Idle")
		@Description("Whether the idle trim released what stayed unused idle-trim-after")
		boolean idle;

	}

	/** A block the pool allocated from its allocator, or gave back to it. */
	abstract static class SegmentEvent extends Event {

		@Label("Pool")
		String pool;

		@Label("Bytes")
		@DataAmount
		long bytes;

	}

	/** A block the pool allocated from its allocator: a segment, or a block above its top class. */
	@Name("io.gpumem.SegmentAllocated")
	@Label("Segment Allocated")
	@Category(MemoryObserver.JFR_CATEGORY)
	@StackTrace(false)
	static final class SegmentAllocated extends SegmentEvent {
	}

	/** A block the pool gave back to its allocator. */
	@Name("io.gpumem.SegmentReleased")
	@Label("Segment Released")
	@Category(MemoryObserver.JFR_CATEGORY)
	@StackTrace(false)
	static final class SegmentReleased extends SegmentEvent {
	}

}
