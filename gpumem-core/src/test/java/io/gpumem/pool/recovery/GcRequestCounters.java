package io.gpumem.pool.recovery;

import java.util.concurrent.atomic.AtomicInteger;

/** Recovery counters for the tests of the chain's steps: the requests to the garbage collector, and nothing else. */
final class GcRequestCounters implements RecoveryCounters {

	final AtomicInteger gcRequests = new AtomicInteger();

	@Override
	public void countWait() {
	}

	@Override
	public void countWaitEnd(long nanos, boolean timedOut) {
	}

	@Override
	public void countStreamWait() {
	}

	@Override
	public void countGcRequest() {
		this.gcRequests.incrementAndGet();
	}

	@Override
	public void countGiveWay() {
	}

	@Override
	public void countAllocationFailure(RuntimeException failure) {
	}

}
