package io.gpumem.stream;

/** A point in a {@link GpuStream}'s work: complete once everything enqueued before it has run. */
public interface GpuEvent extends AutoCloseable {

	/** Whether the work before this event has completed; never waits. */
	boolean isComplete();

	/** Waits until the work before this event has completed. */
	void await();

	/** Releases the event; an incomplete event is waited for first. */
	@Override
	void close();

}
