package io.gpumem.pool;

import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicLong;

import io.gpumem.memory.GpuDeviceFailedException;
import io.gpumem.pool.arena.Block;
import io.gpumem.pool.diagnostics.PoolRecorder;
import io.gpumem.stream.GpuEvent;
import io.gpumem.stream.GpuStream;

/**
 * What comes back to a pool other than by a close, and what it gives back other than by a trim. Blocks of
 * buffers closed after stream work ({@link PooledBuffer#closeAfter}) stay lent until the event recorded behind
 * that work has completed, so that no other work is lent memory a stream may still read or write; blocks of
 * leaked buffers come back as the {@link LeakWatch} finds them. Misses and trims take them back, and so does
 * the maintenance run ({@link Maintenance}), which also releases what stayed cached {@code idle-trim-after}.
 */
final class Upkeep {

	private static final System.Logger LOGGER = System.getLogger(StratifiedMemoryPool.class.getName());

	private final PoolRecorder recorder;

	private final StratifiedMemoryPool pool;

	private final LeakWatch leaks;

	private final Tiers tiers;

	private final long idleTrimNanos;

	private final Queue<Pending> pending = new ConcurrentLinkedQueue<>();

	private final AtomicLong pendingBytes = new AtomicLong();

	private final ScheduledFuture<?> maintenance;

	private volatile boolean closed;

	/**
	 * The upkeep of {@code pool}, whose {@code recorder} it tells, to which its late blocks go back, and whose
	 * {@code tiers} let go of what they kept {@code idleTrimAfter} (null for never); its maintenance runs until
	 * {@link #close()}.
	 */
	Upkeep(StratifiedMemoryPool pool, PoolRecorder recorder, LeakWatch leaks, Tiers tiers, Duration idleTrimAfter) {
		this.recorder = recorder;
		this.pool = pool;
		this.leaks = leaks;
		this.tiers = tiers;
		this.idleTrimNanos = (idleTrimAfter != null) ? idleTrimAfter.toNanos() : 0;
		this.maintenance = Maintenance.schedule(this::maintain, this.idleTrimNanos);
	}

	/**
	 * Gives the block back once {@code event} has completed: at once if it has, and once the pool is closed,
	 * when nothing will look again, after waiting for it.
	 */
	void afterEvent(Pending waiting) {
		if (settled(waiting.event) || this.closed) {
			giveBack(waiting);
			return;
		}
		this.pendingBytes.addAndGet(waiting.block.size);
		this.pending.add(waiting);
		if (this.closed) {
			giveBackAll();
		}
	}

	/**
	 * Gives back the blocks of leaked buffers, and those whose event has completed in the order they were closed.
	 * @return whether any came back
	 */
	boolean giveBackLate() {
		int released = this.leaks.reclaim(this.pool);
		for (Iterator<Pending> it = this.pending.iterator(); it.hasNext();) {
			Pending next = it.next();
			if (settled(next.event) && this.pending.remove(next)) {
				giveBackPending(next);
				released++;
			}
		}
		return released > 0;
	}

	/** Whether buffers dropped without close come back: whether the garbage collector can free anything. */
	boolean reclaimsLeaks() {
		return this.leaks.watching();
	}

	/**
	 * Waits up to {@code timeoutMillis} for the garbage collector to find a watched buffer dropped without close,
	 * and takes back those found.
	 */
	void awaitLeaks(long timeoutMillis) throws InterruptedException {
		this.leaks.awaitReclaim(this.pool, timeoutMillis);
	}

	/** The blocks waiting for their event, closed after stream work that has not completed, each with its wait. */
	Map<Block, Pending> pendingBlocks() {
		Map<Block, Pending> blocks = new IdentityHashMap<>();
		this.pending.forEach((next) -> blocks.put(next.block, next));
		return blocks;
	}

	/** Bytes of blocks waiting for their event: closed after stream work that has not completed. */
	long pendingBytes() {
		return this.pendingBytes.get();
	}

	/**
	 * Gives back the blocks closed after a stream so far, in the order they were closed, each once its work has run
	 * (closing its event waits for it), as long as that takes; blocks closed meanwhile are not waited for.
	 * @return whether any came back
	 */
	boolean awaitPending() {
		boolean released = false;
		for (Pending next : List.copyOf(this.pending)) {
			if (this.pending.remove(next)) {
				giveBackPending(next);
				released = true;
			}
		}
		return released;
	}

	/**
	 * Releases what the tiers kept unused longer than the idle time; nothing when idle trimming is off.
	 * @return the bytes released to the allocator
	 */
	long trimIdle() {
		if (this.idleTrimNanos == 0 || this.closed) {
			return 0;
		}
		long released = this.tiers.trim(0, this.idleTrimNanos);
		this.recorder.trimmed(0, released, true);
		return released;
	}

	/** Stops the maintenance and gives back every block, after its event, as a closing pool does. */
	void close() {
		this.closed = true;
		this.maintenance.cancel(false);
		this.leaks.reclaim(this.pool);
		giveBackAll();
	}

	private void giveBackAll() {
		for (Pending next; (next = this.pending.poll()) != null;) {
			giveBackPending(next);
		}
	}

	private void giveBackPending(Pending pending) {
		this.pendingBytes.addAndGet(-pending.block.size);
		giveBack(pending);
	}

	/** Gives the block back once its work has run: closing the event waits for it. */
	private void giveBack(Pending pending) {
		pending.event.close();
		this.pool.giveBack(pending.block, pending.stripe);
		if (pending.lend != null) {
			this.recorder.closed(pending.lend, pending.stream);
		}
	}

	/**
	 * Whether the work before {@code event} has completed, or will never run: its device failed for good, and
	 * what waited for it goes back to a pool that lends nothing more.
	 */
	static boolean settled(GpuEvent event) {
		try {
			return event.isComplete();
		}
		catch (GpuDeviceFailedException failed) {
			return true;
		}
	}

	private void maintain() {
		try {
			this.tiers.tick();
			giveBackLate();
			trimIdle();
		}
		catch (RuntimeException ex) {
			LOGGER.log(System.Logger.Level.WARNING, "Maintenance of pool '" + this.pool.name() + "' failed", ex);
		}
	}

	/**
	 * A block closed after the work on {@code stream} at {@code closedNanos}, until {@code event} completes, and the
	 * lend whose close is recorded then, or null.
	 */
	record Pending(Block block, int stripe, GpuStream stream, GpuEvent event, long closedNanos,
			PoolRecorder.Lend lend) {
	}

}
