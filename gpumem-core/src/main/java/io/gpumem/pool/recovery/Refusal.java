package io.gpumem.pool.recovery;

import io.gpumem.memory.GpuOutOfMemoryException;

/** What refused a request so far, carried through an {@link OutOfMemoryChain}: its last refusal and its wait. */
public final class Refusal {

	private final long bytes;

	private final boolean beyondReach;

	private GpuOutOfMemoryException last;

	private long waitedNanos = -1;

	/** The bytes the thread held when told to give way, or -1 where it was not. */
	private long gaveWay = -1;

	/** How many acquires waited ahead of a request that might not wait, refused for them; 0 where none did. */
	private int behind;

	Refusal(long bytes, GpuOutOfMemoryException beyondReach) {
		this.bytes = bytes;
		this.beyondReach = beyondReach != null;
		this.last = beyondReach;
	}

	/** The bytes asked for. */
	public long bytes() {
		return this.bytes;
	}

	/** The last refusal: the allocator's, or the pool's where the request was beyond its reach. */
	public GpuOutOfMemoryException last() {
		return this.last;
	}

	/** How long the request waited in line, or -1 where it did not. */
	public long waitedNanos() {
		return this.waitedNanos;
	}

	/** Whether no memory given back could serve the request: larger than the device or the budget. */
	public boolean hopeless() {
		return this.beyondReach || (this.last != null && this.last.diagnostic().exceedsCapacity());
	}

	/** Whether the request was told to give way: every thread holding memory of the pool waited for more. */
	public boolean gaveWay() {
		return this.gaveWay >= 0;
	}

	/** The bytes the thread held when it was told to give way, or -1 where it was not. */
	public long heldWhenToldToGiveWay() {
		return this.gaveWay;
	}

	/** How many acquires waited ahead of the request, which might not wait and was refused for them; 0 if none. */
	public int behind() {
		return this.behind;
	}

	/** Whether the allocator was asked at all. */
	boolean tried() {
		return this.last != null;
	}

	void refusedBy(GpuOutOfMemoryException refusal) {
		this.last = refusal;
	}

	void gaveWay(long heldBytes) {
		this.gaveWay = Math.max(0, heldBytes);
	}

	void behind(int waiting) {
		this.behind = waiting;
	}

	void waited(long nanos) {
		this.waitedNanos = nanos;
	}

}
