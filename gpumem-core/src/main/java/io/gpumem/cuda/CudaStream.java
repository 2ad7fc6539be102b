package io.gpumem.cuda;

import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.gpumem.buffer.GpuBuffer;
import io.gpumem.memory.MemoryKind;
import io.gpumem.stream.GpuStream;
import io.gpumem.stream.GpuWaits;

/**
 * A CUDA stream (non-blocking): copies between pinned and device memory, device-to-device copies (peer
 * to peer when the two buffers are of different devices), fills and prefetches, enqueued with the
 * {@code Async} driver calls.
 */
final class CudaStream implements GpuStream {

	/** Numbers the streams, so that two of a device tell apart in logs and the pools' history. */
	private static final AtomicInteger NUMBERS = new AtomicInteger();

	private final int number = NUMBERS.incrementAndGet();

	private final CudaDevice device;

	private final Object stream;

	private final boolean concurrentManagedAccess;

	private volatile boolean closed;

	/** Set by the first thread to close the stream, the one that parks while its work runs. */
	private final AtomicBoolean closing = new AtomicBoolean();

	CudaStream(CudaDevice device, Object stream, boolean concurrentManagedAccess) {
		this.device = device;
		this.stream = stream;
		this.concurrentManagedAccess = concurrentManagedAccess;
	}

	@Override
	public void copy(GpuBuffer source, long sourceOffset, GpuBuffer target, long targetOffset, long bytes) {
		source.checkRange(sourceOffset, bytes);
		target.checkRange(targetOffset, bytes);
		CudaMemory from = memory(source, true);
		CudaMemory to = memory(target, true);
		CudaDriver driver = bind();
		Object fromPointer = driver.offset(from.pointer(), sourceOffset);
		Object toPointer = driver.offset(to.pointer(), targetOffset);
		boolean fromHost = from.kind() == MemoryKind.PINNED;
		boolean toHost = to.kind() == MemoryKind.PINNED;
		if (fromHost && toHost) {
			throw new IllegalArgumentException("a copy between two PINNED buffers is a host copy: use their ByteBuffers");
		}
		if (fromHost) {
			driver.copyHostToDeviceAsync(toPointer, fromPointer, bytes, this.stream);
		}
		else if (toHost) {
			driver.copyDeviceToHostAsync(toPointer, fromPointer, bytes, this.stream);
		}
		else if (from.device() != to.device()) {
			driver.copyPeerAsync(toPointer, to.device().context(), fromPointer, from.device().context(), bytes,
					this.stream);
		}
		else {
			driver.copyDeviceToDeviceAsync(toPointer, fromPointer, bytes, this.stream);
		}
	}

	@Override
	public void fill(GpuBuffer target, long offset, long bytes, byte value) {
		target.checkRange(offset, bytes);
		CudaMemory to = memory(target);
		if (to.kind() == MemoryKind.PINNED) {
			throw new IllegalArgumentException("a fill of PINNED memory is a host fill: use GpuBuffer.fill");
		}
		CudaDriver driver = bind();
		driver.memsetD8(driver.offset(to.pointer(), offset), value, bytes, this.stream);
	}

	@Override
	public void prefetchToDevice(GpuBuffer buffer) {
		prefetch(buffer, this.device.ordinal());
	}

	@Override
	public void prefetchToHost(GpuBuffer buffer) {
		prefetch(buffer, -1);
	}

	@Override
	public CudaEvent record() {
		CudaDriver driver = bind();
		Object event = driver.createEvent();
		try {
			driver.recordEvent(event, this.stream);
		}
		catch (RuntimeException ex) {
			driver.destroyEvent(event);
			throw ex;
		}
		return new CudaEvent(this.device, event);
	}

	/** {@inheritDoc} On a failed device, whose work will never complete, it throws. */
	@Override
	public void synchronize() {
		if (GpuWaits.parks()) {
			CudaEvent done = record();
			try {
				done.await();
			}
			finally {
				done.discard();
			}
		}
		else {
			bind().synchronizeStream(this.stream);
		}
		this.device.checkWorking();
	}

	@Override
	public <T> T unwrap(Class<T> type) {
		bind();
		if (type.isInstance(this.stream)) {
			return type.cast(this.stream);
		}
		return GpuStream.super.unwrap(type);
	}

	@Override
	public boolean isClosed() {
		return this.closed;
	}

	/**
	 * {@inheritDoc} A virtual thread parks while the work runs, the first to close it; the stream is released in any
	 * case, after the driver's wait for what is left (all of it where the wait was interrupted or another thread
	 * closes it too).
	 */
	@Override
	public void close() {
		try {
			if (this.closing.compareAndSet(false, true) && GpuWaits.parks() && !this.device.health().isFailed()) {
				CudaEvent done = record();
				try {
					done.await();
				}
				finally {
					done.discard();
				}
			}
		}
		catch (CancellationException interrupted) {
			// release's wait in the driver finishes it
		}
		finally {
			release();
		}
	}

	private synchronized void release() {
		if (!this.closed) {
			CudaDriver driver = bind();
			this.closed = true;
			try {
				driver.synchronizeStream(this.stream);
			}
			finally {
				driver.destroyStream(this.stream);
			}
		}
	}

	private void prefetch(GpuBuffer buffer, int target) {
		CudaMemory memory = memory(buffer);
		if (memory.kind() != MemoryKind.UNIFIED) {
			throw new IllegalArgumentException("only UNIFIED memory can be prefetched, not " + memory.kind());
		}
		CudaDriver driver = bind();
		if (this.concurrentManagedAccess) {
			driver.prefetch(memory.pointer(), buffer.size(), target, this.stream);
		}
	}

	CudaDevice device() {
		return this.device;
	}

	/**
	 * The native stream, for work enqueued on {@code device} by a caller that makes its context current.
	 * @throws IllegalArgumentException if this stream belongs to another device
	 * @throws IllegalStateException if the stream is closed
	 */
	Object handle(CudaDevice device) {
		if (device != this.device) {
			throw new IllegalArgumentException(this + " belongs to device " + this.device.ordinal() + ", not to device "
					+ device.ordinal());
		}
		checkOpen();
		return this.stream;
	}

	CudaMemory memory(GpuBuffer buffer) {
		return memory(buffer, false);
	}

	/** The buffer's CUDA memory, which must be of this stream's device unless {@code anyDevice}. */
	private CudaMemory memory(GpuBuffer buffer, boolean anyDevice) {
		CudaMemory memory;
		try {
			memory = buffer.unwrap(CudaMemory.class);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("not CUDA memory: " + buffer, ex);
		}
		if (!anyDevice && memory.device() != this.device) {
			throw new IllegalArgumentException(buffer + " belongs to device " + memory.device().ordinal()
					+ ", not to this stream's device " + this.device.ordinal());
		}
		return memory;
	}

	private CudaDriver bind() {
		checkOpen();
		return this.device.bind();
	}

	private void checkOpen() {
		if (this.closed) {
			throw new IllegalStateException("stream is closed");
		}
	}

	@Override
	public String toString() {
		return "CudaStream[device " + this.device.ordinal() + ", #" + this.number + (this.closed ? ", closed" : "") + "]";
	}

}
