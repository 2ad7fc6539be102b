package io.gpumem.pool.diagnostics;

import java.util.List;

/**
 * One event of a pool's history ({@code MemoryCache.history()}): a recorded buffer acquired or closed, a segment
 * allocated from or released to the allocator, a trim that released memory, an acquire that failed for want of it.
 *
 * @param sequence the event's number in the pool's history, from 0, nearly in the order the pool took and gave
 * back memory: an acquire's is drawn before it takes its block (so a miss comes before the segment allocated for
 * it, and an acquire that waited for memory before the closes that gave it some), a close's once its block is
 * back (after its stream's work, for a buffer closed after one); a buffer set aside on a shelf is closed when set
 * aside, and taken from it when taken. The number of an acquire that failed is not used.
 * @param timeMicros when, in microseconds since the epoch
 * @param type what happened
 * @param bytes bytes requested (acquire, close, out of memory), allocated or released (segments), or released by
 * a trim
 * @param blockBytes the bytes of the block lent to the buffer (acquire, close); 0 otherwise
 * @param buffer the number of the buffer acquired or closed, the same for both; 0 otherwise
 * @param reservedBytes bytes the pool held from its allocator after the event (for an acquire, once lent)
 * @param thread the name of the thread that acted
 * @param stream the stream an acquire was ordered on or a close waited for, or null
 * @param frames where an acquired buffer was acquired, where its frames were kept ({@link BufferRecording}): the
 * first frames outside gpumem; empty otherwise
 */
public record MemoryEvent(long sequence, long timeMicros, Type type, long bytes, long blockBytes, long buffer,
		long reservedBytes, String thread, String stream, List<String> frames) {

	public MemoryEvent {
		frames = List.copyOf(frames);
	}

	/** What happened. */
	public enum Type {

		/** A recorded buffer was acquired. */
		ACQUIRE,

		/** A recorded buffer was closed (after a stream's work, where {@code stream} is set), or reclaimed as a leak. */
		CLOSE,

		/** The pool allocated a segment, or a block above its top class, from its allocator. */
		SEGMENT_ALLOCATED,

		/** The pool gave a segment, or a block above its top class, back to its allocator. */
		SEGMENT_RELEASED,

		/** A trim released memory. */
		TRIM,

		/** An acquire failed for want of memory. */
		OUT_OF_MEMORY

	}

}
