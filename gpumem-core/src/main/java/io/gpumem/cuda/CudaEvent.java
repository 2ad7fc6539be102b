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

	/** {@inheritDoc} On a failed device, whose work will never complete, it throws. */
	@Override
	public boolean isComplete() {
		if (!this.complete) {
			boolean complete = driver().queryEvent(this.event);
			this.device.checkWorking();
			this.complete = complete;
		}
		return this.complete;
	}

	/** {@inheritDoc} On a failed device, whose work will never complete, it throws. */
	@Override
	public void await() {
		if (!this.complete) {
			driver().synchronizeEvent(this.event);
			this.device.checkWorking();
			this.complete = true;
		}
	}

	/**
	 * {@inheritDoc} On a failed device it releases the event without waiting. A closed event has nothing more
	 * to wait for: it answers complete to a thread that looked at it before the close.
	 */
	@Override
	public synchronized void close() {
		if (!this.destroyed) {
			CudaDriver driver = driver();
			this.destroyed = true;
			if (!this.complete) {
				driver.synchronizeEvent(this.event);
				this.complete = true;
			}
			driver.destroyEvent(this.event);
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
