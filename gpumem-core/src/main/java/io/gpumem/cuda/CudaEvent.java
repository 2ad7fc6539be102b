package io.gpumem.cuda;

import io.gpumem.stream.GpuEvent;

/** A recorded CUDA event. */
final class CudaEvent implements GpuEvent {

	private final CudaDevice device;

	private final Object event;

	private volatile boolean complete;

	private boolean destroyed;

	CudaEvent(CudaDevice device, Object event) {
		this.device = device;
		this.event = event;
	}

	@Override
	public boolean isComplete() {
		if (!this.complete) {
			this.complete = driver().queryEvent(this.event);
		}
		return this.complete;
	}

	@Override
	public void await() {
		if (!this.complete) {
			driver().synchronizeEvent(this.event);
			this.complete = true;
		}
	}

	@Override
	public synchronized void close() {
		if (!this.destroyed) {
			await();
			this.destroyed = true;
			this.device.bind().destroyEvent(this.event);
		}
	}

	private synchronized CudaDriver driver() {
		if (this.destroyed) {
			throw new IllegalStateException("event is closed");
		}
		return this.device.bind();
	}

	@Override
	public String toString() {
		return "CudaEvent[" + (this.complete ? "complete" : "pending") + (this.destroyed ? ", closed" : "") + "]";
	}

}
