package io.gpumem.observation;

import java.util.Objects;

import io.gpumem.memory.MemoryKind;

/**
 * A piece of memory work a {@link MemoryObserver} is told of.
 *
 * @param type what the work is
 * @param pool the pool it draws on: the pool that missed, or the pinned pool a transfer is staged in
 * @param kind the kind of memory that pool holds
 * @param bytes the bytes reserved or moved
 */
public record MemoryOperation(Type type, String pool, MemoryKind kind, long bytes) {

	public MemoryOperation {
		Objects.requireNonNull(type, "type");
		Objects.requireNonNull(pool, "pool");
		Objects.requireNonNull(kind, "kind");
	}

	/** What the work is. */
	public enum Type {

		/** A miss: the pool had no cached block and reserves one from its allocator, retrying and waiting. */
		ACQUIRE,

		/** Arrays staged in pinned memory and copied to the device. */
		UPLOAD,

		/** Copies from the device into pinned staging, then into arrays. */
		DOWNLOAD

	}

}
