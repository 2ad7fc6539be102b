package io.gpumem.pool.recovery;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.gpumem.memory.GpuOutOfMemoryException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class LeakCollectionTest {

	/**
	 * An acquire that arrives while another collects waits for that collection and retries on what it brought back,
	 * asking the garbage collector for nothing more.
	 */
	@Test
	void anAcquireThatArrivesDuringAnotherCollectionRetriesOnWhatItBroughtBack() throws Exception {
		CountDownLatch collecting = new CountDownLatch(1);
		CountDownLatch found = new CountDownLatch(1);
		Leaks source = new Leaks(collecting, found);
		GcRequestCounters counters = new GcRequestCounters();
		LeakCollection collection = new LeakCollection("test", source, counters);

		CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> collection.collect(1, () -> "first"));
		assertThat(collecting.await(10, TimeUnit.SECONDS)).isTrue();
		Thread arriving = new Thread(() -> source.second = collection.collect(1, () -> "second"));
		arriving.start();
		await().until(() -> arriving.getState() == Thread.State.BLOCKED);
		found.countDown();

		assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("first");
		arriving.join(10_000);
		assertThat(source.second).isEqualTo("second");
		assertThat(counters.gcRequests).as("one collection for both").hasValue(1);
	}

	/** Leaks that the first wait finds once the test lets it; the waits after it find one each at once. */
	private static final class Leaks implements MemorySource {

		private final CountDownLatch collecting;

		private final CountDownLatch found;

		private volatile long leaks;

		volatile String second;

		Leaks(CountDownLatch collecting, CountDownLatch found) {
			this.collecting = collecting;
			this.found = found;
		}

		@Override
		public void awaitLeaks(long timeoutMillis) throws InterruptedException {
			this.collecting.countDown();
			this.found.await();
			this.leaks++;
		}

		@Override
		public long leaks() {
			return this.leaks;
		}

		@Override
		public GpuOutOfMemoryException beyondReach(long bytes) {
			throw new UnsupportedOperationException();
		}

		@Override
		public long free(long bytes, int attempt) {
			throw new UnsupportedOperationException();
		}

		@Override
		public long pendingBytes() {
			throw new UnsupportedOperationException();
		}

		@Override
		public boolean awaitStreamWork() {
			throw new UnsupportedOperationException();
		}

		@Override
		public boolean reclaimsLeaks() {
			return true;
		}

		@Override
		public long lentBytes() {
			throw new UnsupportedOperationException();
		}

		@Override
		public GpuOutOfMemoryException refuse(Refusal refusal) {
			throw new UnsupportedOperationException();
		}

	}

}
