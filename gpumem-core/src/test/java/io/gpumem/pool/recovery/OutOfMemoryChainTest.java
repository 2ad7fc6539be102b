package io.gpumem.pool.recovery;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryInfo;
import io.gpumem.memory.MemoryKind;
import io.gpumem.memory.OutOfMemoryDiagnostic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The chain's steps in order, each tried only after those before it yielded nothing, and the first that yields a
 * block ending it: a source that refuses everything but what a test lets through records what was asked of it.
 */
class OutOfMemoryChainTest {

	private static final long BYTES = 1 << 20;

	private static final long NO_WAIT = 0;

	private static final long WAIT = TimeUnit.MILLISECONDS.toNanos(30);

	private final Source source = new Source();

	private final OutOfMemoryChain<String> chain = new OutOfMemoryChain<>("test", this.source, new GcRequestCounters(), 2,
			new Holdings());

	@Test
	void theAllocatorServesFirst() {
		assertThat(this.chain.obtain(this.source, NO_WAIT)).isEqualTo("allocated");
		assertThat(this.source.asked).containsExactly("allocate");
	}

	@Test
	void thenItIsAskedAgainEachTimeMemoryWasFreedWhileTheRetriesLast() {
		this.source.refusals = 2;
		this.source.freed = BYTES;
		assertThat(this.chain.obtain(this.source, NO_WAIT)).isEqualTo("allocated");
		assertThat(this.source.asked).containsExactly("allocate", "free 0", "allocate", "free 1", "allocate");
	}

	@Test
	void aRetryStopsWhenNothingWasFreed() {
		this.source.refusals = Integer.MAX_VALUE;
		assertThatExceptionOfType(GpuOutOfMemoryException.class)
			.isThrownBy(() -> this.chain.obtain(this.source, NO_WAIT));
		assertThat(this.source.asked).containsExactly("allocate", "free 0", "refuse");
	}

	@Test
	void thenARequestThatMayNotWaitAwaitsTheWorkOfBuffersClosedAfterAStream() {
		this.source.refusals = 1;
		this.source.pending = BYTES;
		assertThat(this.chain.obtain(this.source, NO_WAIT)).isEqualTo("allocated");
		assertThat(this.source.asked).containsExactly("allocate", "free 0", "awaitStreamWork", "allocate");
	}

	@Test
	void thenARequestThatMayWaitTakesWhatComesBackInLine() {
		this.source.refusals = 1;
		this.source.returned = "returned";
		assertThat(this.chain.obtain(this.source, WAIT)).isEqualTo("returned");
		assertThat(this.source.asked).containsExactly("allocate", "free 0", "returned");
	}

	@Test
	void lastAGarbageCollectionBringsBackBuffersDroppedWithoutClose() {
		this.source.refusals = 1;
		this.source.leaked = true;
		assertThat(this.chain.obtain(this.source, NO_WAIT)).isEqualTo("allocated");
		assertThat(this.source.asked).containsExactly("allocate", "free 0", "lentBytes", "awaitLeaks", "allocate");
	}

	@Test
	void whenEveryStepIsRefusedTheSourceRefusesWithTheLastRefusalAndTheWait() {
		this.source.refusals = Integer.MAX_VALUE;
		this.source.pending = BYTES;
		assertThatExceptionOfType(GpuOutOfMemoryException.class)
			.isThrownBy(() -> this.chain.obtain(this.source, WAIT))
			.satisfies((ex) -> assertThat(ex.getMessage()).contains("refused by the allocator"));
		assertThat(this.source.asked).startsWith("allocate", "free 0", "returned").endsWith("refuse")
			.doesNotContain("awaitStreamWork");
		assertThat(this.source.refusal.waitedNanos()).isGreaterThanOrEqualTo(WAIT);
		assertThat(this.source.refusal.bytes()).isEqualTo(BYTES);
	}

	@Test
	void aRequestBeyondReachGoesThroughNoStep() {
		this.source.beyondReach = true;
		this.source.pending = BYTES;
		this.source.leaked = true;
		assertThatExceptionOfType(GpuOutOfMemoryException.class)
			.isThrownBy(() -> this.chain.obtain(this.source, WAIT))
			.satisfies((ex) -> assertThat(ex.getMessage()).contains("beyond reach"));
		assertThat(this.source.asked).containsExactly("refuse");
		assertThat(this.source.refusal.hopeless()).isTrue();
	}

	/** A pool's memory and one request, refusing all but what a test lets through. */
	private static final class Source implements MemorySource, OutOfMemoryChain.Request<String> {

		final List<String> asked = new ArrayList<>();

		int refusals;

		long freed;

		long pending;

		boolean leaked;

		boolean beyondReach;

		String returned;

		Refusal refusal;

		private long leaks;

		@Override
		public long bytes() {
			return BYTES;
		}

		@Override
		public String allocate() {
			this.asked.add("allocate");
			if (this.refusals > 0) {
				this.refusals--;
				throw refused("refused by the allocator");
			}
			return "allocated";
		}

		@Override
		public String returned() {
			this.asked.add("returned");
			return this.returned;
		}

		@Override
		public GpuOutOfMemoryException beyondReach(long bytes) {
			return this.beyondReach ? refused("beyond reach") : null;
		}

		@Override
		public long free(long bytes, int attempt) {
			this.asked.add("free " + attempt);
			return this.freed;
		}

		@Override
		public long pendingBytes() {
			return this.pending;
		}

		@Override
		public boolean awaitStreamWork() {
			this.asked.add("awaitStreamWork");
			this.pending = 0;
			return true;
		}

		@Override
		public boolean reclaimsLeaks() {
			return this.leaked;
		}

		@Override
		public long lentBytes() {
			this.asked.add("lentBytes");
			return BYTES;
		}

		@Override
		public void awaitLeaks(long timeoutMillis) {
			this.asked.add("awaitLeaks");
			this.leaks++;
		}

		@Override
		public long leaks() {
			return this.leaks;
		}

		@Override
		public GpuOutOfMemoryException refuse(Refusal refusal) {
			this.asked.add("refuse");
			this.refusal = refusal;
			return refusal.last();
		}

		private static GpuOutOfMemoryException refused(String reason) {
			return new GpuOutOfMemoryException(OutOfMemoryDiagnostic.of(MemoryKind.DEVICE, BYTES,
					new MemoryInfo(0, beyondReachCapacity(reason)), -1, reason));
		}

		private static long beyondReachCapacity(String reason) {
			return reason.equals("beyond reach") ? BYTES / 2 : 4 * BYTES;
		}

	}

}
