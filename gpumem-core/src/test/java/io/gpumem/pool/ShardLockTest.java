package io.gpumem.pool;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/** An arena shard's lock: frees never wait on it, and every free is applied once, by its thread or the holder. */
class ShardLockTest {

	/** Which stamps were applied, written by the lock's holder only. */
	private final BitSet applied = new BitSet();

	private final AtomicInteger inside = new AtomicInteger();

	private final AtomicBoolean overlapped = new AtomicBoolean();

	private final ShardLock lock = new ShardLock((block, stamp) -> {
		enter();
		if (this.applied.get((int) stamp)) {
			this.overlapped.set(true);
		}
		this.applied.set((int) stamp);
		leave();
	});

	@Test
	void aFreeThatFindsTheLockHeldReturnsAndTheHolderAppliesIt() throws Exception {
		CountDownLatch held = new CountDownLatch(1);
		CountDownLatch letGo = new CountDownLatch(1);
		ExecutorService holder = Executors.newSingleThreadExecutor();
		try {
			CompletableFuture<Void> holding = CompletableFuture.runAsync(() -> {
				this.lock.lock();
				try {
					held.countDown();
					await(letGo);
					assertThat(this.applied.get(7)).as("queued, not applied while the holder works").isFalse();
				}
				finally {
					this.lock.unlock();
				}
			}, holder);
			held.await();
			this.lock.free(null, 7);
			assertThat(this.applied.get(7)).isFalse();
			letGo.countDown();
			holding.get(10, TimeUnit.SECONDS);
			assertThat(this.applied.get(7)).as("applied as the holder let go").isTrue();
		}
		finally {
			holder.shutdown();
		}
	}

	@Test
	void freesAndHoldsFromManyThreadsApplyEveryFreeOnceOneAtATime() throws Exception {
		int threads = 4;
		int perThread = 100_000;
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			List<CompletableFuture<Void>> runs = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int first = t * perThread;
				runs.add(CompletableFuture.runAsync(() -> {
					for (int i = 0; i < perThread; i++) {
						if (i % 3 == 0) {
							this.lock.lock();
							enter();
							leave();
							this.lock.unlock();
						}
						this.lock.free(null, first + i);
					}
				}, pool));
			}
			CompletableFuture.allOf(runs.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
		}
		finally {
			pool.shutdown();
		}
		assertThat(this.overlapped).as("two holders at once, or a free applied twice").isFalse();
		assertThat(this.applied.cardinality()).as("every free applied, none left queued")
			.isEqualTo(threads * perThread);
	}

	/** As with the monitor it replaced, an allocator called under the lock may call into the pool and lock again. */
	@Test
	@Timeout(value = 10, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
	void theHolderTakesTheLockAgainAndItsOwnFreeIsAppliedAtOnce() throws Exception {
		this.lock.lock();
		this.lock.lock();
		this.lock.free(null, 3);
		assertThat(this.applied.get(3)).isTrue();
		this.lock.unlock();
		this.lock.unlock();
		CompletableFuture.runAsync(() -> this.lock.free(null, 4)).get(10, TimeUnit.SECONDS);
		assertThat(this.applied.get(4)).as("let go of, so another thread's free is applied at once").isTrue();
	}

	@Test
	void aQueuedFreeThatIsRefusedLeavesTheLockFreeAndTheOthersApplied() throws Exception {
		BitSet freed = new BitSet();
		ShardLock refusing = new ShardLock((block, stamp) -> {
			if (stamp == 1) {
				throw new IllegalStateException("span freed twice");
			}
			freed.set((int) stamp);
		});
		refusing.lock();
		CompletableFuture.runAsync(() -> {
			refusing.free(null, 1);
			refusing.free(null, 2);
		}).get(10, TimeUnit.SECONDS);
		refusing.unlock();
		assertThat(freed.get(2)).as("the free queued after the refused one").isTrue();
		CompletableFuture.runAsync(() -> refusing.free(null, 3)).get(10, TimeUnit.SECONDS);
		assertThat(freed.get(3)).as("the lock let go of").isTrue();
	}

	private void enter() {
		if (this.inside.incrementAndGet() != 1) {
			this.overlapped.set(true);
		}
	}

	private void leave() {
		this.inside.decrementAndGet();
	}

	private static void await(CountDownLatch latch) {
		try {
			latch.await();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
