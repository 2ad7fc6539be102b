package io.gpumem.pool;

import java.util.concurrent.atomic.AtomicBoolean;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.stream.GpuEvent;
import io.gpumem.stream.GpuStream;

/**
 * A stream whose work completes when the test says so ({@link #finish()}), or when an event of it is waited
 * for, as a device runs the work a host thread waits on: for the pool's releases after stream work.
 */
public final class ManualStream implements GpuStream {

	private final AtomicBoolean done = new AtomicBoolean();

	/** Completes the work enqueued so far. */
	public void finish() {
		this.done.set(true);
	}

	@Override
	public GpuEvent record() {
		return new GpuEvent() {

			@Override
			public boolean isComplete() {
				return ManualStream.this.done.get();
			}

			@Override
			public void await() {
				finish();
			}

			@Override
			public void close() {
				await();
			}

		};
	}

	@Override
	public void copy(GpuBuffer source, long sourceOffset, GpuBuffer target, long targetOffset, long bytes) {
		throw new UnsupportedOperationException();
	}

	@Override
	public void fill(GpuBuffer target, long offset, long bytes, byte value) {
		throw new UnsupportedOperationException();
	}

	@Override
	public void prefetchToDevice(GpuBuffer buffer) {
		throw new UnsupportedOperationException();
	}

	@Override
	public void prefetchToHost(GpuBuffer buffer) {
		throw new UnsupportedOperationException();
	}

	@Override
	public void synchronize() {
		finish();
	}

	@Override
	public boolean isClosed() {
		return false;
	}

	@Override
	public void close() {
	}

}
