package io.gpumem.pool;

/** What a pool's sleep does with the bytes of the buffers it lends ({@link MemoryPool#sleep}). */
public enum SleepMode {

	/** Copies them to host memory and back at the wake: every buffer keeps its address and its bytes. */
	OFFLOAD,

	/** Drops them: every buffer keeps its address, its bytes undefined after the wake, for what the service rebuilds. */
	DISCARD

}
