package io.gpumem.memory;

/** The kinds of memory an allocator hands out. */
public enum MemoryKind {

	/** Memory on the device, reachable by kernels only. */
	DEVICE,

	/** Page-locked host memory, used to stage DMA transfers between host and device. */
	PINNED,

	/** Managed memory that migrates between host and device on demand. */
	UNIFIED

}
