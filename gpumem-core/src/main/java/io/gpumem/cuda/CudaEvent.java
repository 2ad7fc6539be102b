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

	/**
	 * {@inheritDoc} On a failed device, whose work will never complete, it throws. An event another thread closed
	 * meanwhile is complete: its close waited for the work, and a thread that closes or awaits the event holds it
	 * until then.
	 */
	@Override
	public boolean isComplete() {
		if (!this.complete) {
			boolean complete;
			synchronized (this) {
				complete = this.destroyed || this.device.bind().queryEvent(this.event);
			}
			this.device.checkWorking();
			this.complete = complete;
		}
		return this.complete;
	}

	/** {@inheritDoc} On a failed device, whose work will never complete, it throws. */
	@Override
	public void await() {
		if (!this.complete) {
			synchronized (this) {
				if (!this.destroyed) {
					this.device.bind().synchronizeEvent(this.event);
				}
			}
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
			CudaDriver driver = this.device.bind();
			this.destroyed = true;
			if (!this.complete) {
				driver.synchronizeEvent(this.event);
				this.complete = true;
			}
			driver.destroyEvent(this.event);
		}
	}

	@Override
	public String toString() {
		return "CudaEvent[" + (this.complete ? "complete" : "pending") + (this.destroyed ? ", closed" : "") + "]";
	}

}
