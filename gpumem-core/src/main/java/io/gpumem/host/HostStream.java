package io.gpumem.host;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.memory.DeviceHealth;
import io.gpumem.memory.MemoryKind;
import io.gpumem.stream.GpuEvent;
import io.gpumem.stream.GpuStream;

/**
 * The host backend's stream: every copy and fill runs at once, so every event is complete. Once the device has
 * failed, it refuses work and synchronizations, as a CUDA stream does.
 */
final class HostStream implements GpuStream {

	/** Numbers the streams, so that two tell apart in logs and the pools' history. */
	private static final AtomicInteger NUMBERS = new AtomicInteger();

	private final int number = NUMBERS.incrementAndGet();

	private static final GpuEvent COMPLETE = new GpuEvent() {

		@Override
		public boolean isComplete() {
			return true;
		}

		@Override
		public void await() {
		}

		@Override
		public void close() {
		}

	};

	private final DeviceHealth health;

	private volatile boolean closed;

	HostStream(DeviceHealth health) {
		this.health = health;
	}

	@Override
	public void copy(GpuBuffer source, long sourceOffset, GpuBuffer target, long targetOffset, long bytes) {
		checkOpen();
		source.checkRange(sourceOffset, bytes);
		target.checkRange(targetOffset, bytes);
		ByteBuffer from = source.unwrap(ByteBuffer.class);
		ByteBuffer to = target.unwrap(ByteBuffer.class);
		to.put((int) targetOffset, from, (int) sourceOffset, (int) bytes);
	}

	@Override
	public void fill(GpuBuffer target, long offset, long bytes, byte value) {
		checkOpen();
		target.fill(offset, bytes, value);
	}

	@Override
	public void prefetchToDevice(GpuBuffer buffer) {
		checkUnified(buffer);
	}

	@Override
	public void prefetchToHost(GpuBuffer buffer) {
		checkUnified(buffer);
	}

	@Override
	public GpuEvent record() {
		checkOpen();
		return COMPLETE;
	}

	@Override
	public void synchronize() {
		checkOpen();
	}

	@Override
	public boolean isClosed() {
		return this.closed;
	}

	@Override
	public void close() {
		this.closed = true;
	}

	private void checkUnified(GpuBuffer buffer) {
		checkOpen();
		if (buffer.kind() != MemoryKind.UNIFIED) {
			throw new IllegalArgumentException("only UNIFIED memory can be prefetched, not " + buffer.kind());
		}
	}

	private void checkOpen() {
		if (this.closed) {
			throw new IllegalStateException("stream is closed");
		}
		this.health.check();
	}

	@Override
	public String toString() {
		return "HostStream[#" + this.number + (this.closed ? ", closed" : "") + "]";
	}

}
