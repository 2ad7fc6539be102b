package io.gpumem.cuda;

import java.util.concurrent.CancellationException;

import io.gpumem.stream.GpuEvent;
import io.gpumem.stream.GpuWaits;

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
			GpuWaits.await(this::isComplete, this::synchronize);
		}
	}

	private void synchronize() {
		synchronized (this) {
			if (!this.destroyed) {
				this.device.bind().synchronizeEvent(this.event);
			}
		}
		this.device.checkWorking();
		this.complete = true;
	}

	/**
	 * {@inheritDoc} On a failed device it releases the event without waiting. A closed event has nothing more
	 * to wait for: it answers complete to a thread that looked at it before the close.
	 */
	@Override
	public void close() {
		try {
			if (GpuWaits.parks() && !this.complete && !this.device.health().isFailed()) {
				await();
			}
		}
		catch (CancellationException interrupted) {
			// the driver's wait in destroy finishes it: what waited for the event may be reused only after its work
		}
		finally {
			destroy(true);
		}
	}

	/** Releases the event without waiting for its work, which goes on: for an event no one else holds. */
	void discard() {
		destroy(false);
	}

	private synchronized void destroy(boolean waiting) {
		if (!this.destroyed) {
			CudaDriver driver = this.device.bind();
			this.destroyed = true;
			if (waiting && !this.complete) {
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
