package io.gpumem.memory;

/**
 * One block of memory handed out by a {@link MemoryAllocator}, with the primitive operations its
 * backend supports. Offsets and lengths are checked by the callers in {@code io.gpumem.buffer}; an
 * allocation checks only that it has not been freed.
 */
public interface Allocation {

	/** Size of the block in bytes. */
	long size();

	/** The kind of memory of the block. */
	MemoryKind kind();

	/**
	 * The backend's native handle, such as a {@code java.nio.ByteBuffer} on the host backend.
	 * @throws IllegalArgumentException if the backend has no handle of that type
	 */
	<T> T unwrap(Class<T> type);

	/** Copies {@code count} elements of a primitive array into the block at {@code byteOffset}. */
	void copyFromHost(long byteOffset, Object array, int arrayIndex, int count, ElementType type);

	/** Copies {@code count} elements from the block at {@code byteOffset} into a primitive array. */
	void copyToHost(long byteOffset, Object array, int arrayIndex, int count, ElementType type);

	/**
	 * Copies {@code bytes} bytes from {@code byteOffset} into {@code target}, a block of the same backend, at
	 * {@code targetOffset}, complete when it returns: device memory into host memory or back. Through a Java array of
	 * at most 1 MiB at a time, where a backend copies no more directly.
	 */
	default void copyTo(long byteOffset, Allocation target, long targetOffset, long bytes) {
		byte[] staging = new byte[(int) Math.min(bytes, 1 << 20)];
		for (long done = 0; done < bytes; done += staging.length) {
			int chunk = (int) Math.min(staging.length, bytes - done);
			copyToHost(byteOffset + done, staging, 0, chunk, ElementType.BYTE);
			target.copyFromHost(targetOffset + done, staging, 0, chunk, ElementType.BYTE);
		}
	}

	/** Sets {@code byteCount} bytes from {@code byteOffset} to {@code value}. */
	void fill(long byteOffset, long byteCount, byte value);

	/** Sets {@code count} 32-bit words from {@code byteOffset}, a multiple of 4, to {@code value}. */
	void fillInts(long byteOffset, long count, int value);

	/**
	 * A view of {@code bytes} bytes of this block from {@code byteOffset}, for allocators that carve
	 * small blocks out of a large one. The view is not freed on its own: it lives as long as this block.
	 */
	Allocation slice(long byteOffset, long bytes);

}
