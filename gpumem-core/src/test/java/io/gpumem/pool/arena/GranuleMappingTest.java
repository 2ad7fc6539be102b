package io.gpumem.pool.arena;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.allocator.StatisticsAllocator;
import io.gpumem.cuda.CudaBackend;
import io.gpumem.cuda.CudaException;
import io.gpumem.cuda.FakeCudaDriver;
import io.gpumem.memory.Allocation;
import io.gpumem.memory.GpuOutOfMemoryException;
import io.gpumem.memory.MemoryAllocator;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.arena.Arena;
import io.gpumem.pool.arena.Block;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * The driver's calls on an arena's granules, made outside its lock: on the fake driver, whose {@code cuMemCreate}
 * or {@code cuMemUnmap} a test holds while other threads use the arena.
 */
class GranuleMappingTest {

	private static final long MIB = 1L << 20;

	private static final long GRANULE = 2 * MIB;

	/** The first call held, once armed. */
	private final Hold hold = new Hold();

	/** A second call held, once armed, while the first is. */
	private final Hold secondHold = new Hold();

	/** The call the driver refuses once, as it begins, where one is set. */
	private final AtomicReference<String> refused = new AtomicReference<>();

	private final FakeCudaDriver driver = new FakeCudaDriver(64 * MIB)
		.pausingMemoryCalls((call) -> {
			if (this.refused.compareAndSet(call, null)) {
				throw new CudaException(call, 1, "CUDA_ERROR_INVALID_VALUE");
			}
			if (!this.hold.pause(call)) {
				this.secondHold.pause(call);
			}
		});

	private final CudaBackend backend = CudaBackend.open(this.driver, 0);

	private final MemoryAllocator physical = this.backend.virtualMemory().allocator();

	private final Counts counters = new Counts();

	private final Arena arena = new Arena(this.physical, GRANULE, GRANULE, this.counters, (classIndex) -> false);

	private final ExecutorService other = Executors.newSingleThreadExecutor();

	@AfterEach
	void close() throws InterruptedException {
		this.hold.resume.countDown();
		this.secondHold.resume.countDown();
		this.other.shutdown();
		assertThat(this.other.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
		assertThat(CompletableFuture.runAsync(this.arena::close))
			.as("the close, which waits for every map and unmap under way to end")
			.succeedsWithin(Duration.ofSeconds(30));
		assertThat(this.driver.usedBytes(0)).as("every granule given back").isZero();
		assertThat(this.driver.liveAllocations()).as("every range and granule given back").isZero();
		this.backend.close();
	}

	/**
	 * While one thread maps a granule, a free and a take of a span already mapped go through the arena's lock and
	 * return; the mapping then completes and its block is usable.
	 */
	@Test
	void aFreeAndATakeOfAMappedSpanDoNotWaitWhileAnotherThreadMaps() throws Exception {
		Block first = this.arena.allocate(0, MIB, 0);
		Block middle = this.arena.allocate(0, MIB / 2, 0);
		Block last = this.arena.allocate(0, MIB / 2, 0);
		this.arena.giveBack(middle, 0, 0, false);
		this.hold.call.set("cuMemCreate");
		Future<Block> growing = this.other.submit(() -> this.arena.allocate(0, 3 * MIB, 0));
		assertThat(this.hold.entered.await(10, TimeUnit.SECONDS)).as("the other thread maps").isTrue();

		Block taken = CompletableFuture.supplyAsync(() -> this.arena.take(0, MIB / 2, 0)).get(10, TimeUnit.SECONDS);
		assertThat(taken).as("the half granule freed, mapped").isNotNull();
		CompletableFuture.runAsync(() -> this.arena.giveBack(first, 0, 0, false)).get(10, TimeUnit.SECONDS);

		this.hold.resume.countDown();
		Block grown = growing.get(10, TimeUnit.SECONDS);
		grown.allocation.fill(0, grown.size, (byte) 7);
		assertThat(this.arena.segmentBytes()).as("the first granule and the two the grown block maps")
			.isEqualTo(3 * GRANULE)
			.isEqualTo(this.driver.usedBytes(0));
		assertThat(this.counters.reservedBytes(0)).isEqualTo(MIB / 2 + MIB / 2 + 3 * MIB);
		for (Block block : new Block[] { taken, last, grown }) {
			this.arena.giveBack(block, 0, 0, false);
		}
	}

	/**
	 * A request whose span lies on a granule another thread is unmapping waits for the unmap to end and maps the
	 * granule anew: mapping it while still mapped, the driver would refuse.
	 */
	@Test
	void aSpanOnAGranuleBeingUnmappedWaitsForItAndMapsItAgain() throws Exception {
		this.arena.giveBack(this.arena.allocate(0, 3 * MIB, 0), 0, 0, false);
		this.hold.call.set("cuMemUnmap");
		Future<Long> trim = this.other.submit(() -> this.arena.release(Long.MAX_VALUE, Long.MAX_VALUE));
		assertThat(this.hold.entered.await(10, TimeUnit.SECONDS)).as("the trim unmaps").isTrue();

		FutureTask<Block> request = waiting(() -> this.arena.allocate(0, MIB, 0));
		assertThat(request).as("waits for the granule").isNotDone();

		this.hold.resume.countDown();
		assertThat(trim.get(10, TimeUnit.SECONDS)).as("both granules").isEqualTo(2 * GRANULE);
		Block block = request.get(10, TimeUnit.SECONDS);
		block.allocation.fill(0, block.size, (byte) 7);
		assertThat(this.arena.segmentBytes()).isEqualTo(GRANULE).isEqualTo(this.driver.usedBytes(0));
		this.arena.giveBack(block, 0, 0, false);
	}

	/**
	 * A request that would map while a sleep unmaps the granule under a lent span, beside which it would lie, waits for
	 * the sleep to end rather than for a wake, then wakes the arena and maps beside the span woken with it.
	 */
	@Test
	void aRequestThatWouldMapWhileASleepUnmapsWaitsForItAndWakesTheArena() throws Exception {
		Block lent = this.arena.allocate(0, MIB, 0);
		this.hold.call.set("cuMemUnmap");
		Future<long[]> sleep = this.other.submit(() -> this.arena.sleep(false));
		assertThat(this.hold.entered.await(10, TimeUnit.SECONDS)).as("the sleep unmaps").isTrue();

		FutureTask<Block> request = waiting(() -> this.arena.allocate(0, MIB, 0), Thread.State.BLOCKED);
		assertThat(request).as("waits for the sleep, to wake the arena").isNotDone();

		this.hold.resume.countDown();
		assertThat(sleep.get(10, TimeUnit.SECONDS)).as("the granule, its bytes dropped").containsExactly(GRANULE, 0);
		Block block = request.get(10, TimeUnit.SECONDS);
		block.allocation.fill(0, block.size, (byte) 7);
		lent.allocation.fill(0, lent.size, (byte) 7);
		assertThat(this.arena.sleepingBytes()).as("woken").isZero();
		assertThat(this.arena.segmentBytes()).isEqualTo(GRANULE).isEqualTo(this.driver.usedBytes(0));
		this.arena.giveBack(block, 0, 0, false);
		this.arena.giveBack(lent, 0, 0, false);
	}

	/**
	 * A request that would map beside a lent span while its granule sleeps wakes the arena first, as no map may lie
	 * on a granule asleep; a close while granules sleep drops them.
	 */
	@Test
	void aRequestThatWouldMapWhileGranulesSleepWakesTheArenaFirst() throws Exception {
		Block lent = this.arena.allocate(0, MIB, 0);
		this.arena.sleep(false);
		assertThat(this.driver.usedBytes(0)).isZero();

		Block block = CompletableFuture.supplyAsync(() -> this.arena.allocate(0, MIB, 0)).get(10, TimeUnit.SECONDS);
		assertThat(this.arena.sleepingBytes()).as("woken").isZero();
		block.allocation.fill(0, block.size, (byte) 7);
		assertThat(this.arena.segmentBytes()).isEqualTo(GRANULE).isEqualTo(this.driver.usedBytes(0));

		this.arena.sleep(false);
		this.arena.close();
		assertThat(this.arena.sleepingBytes()).as("dropped").isZero();
		assertThat(this.driver.usedBytes(0)).isZero();
		this.arena.giveBack(block, 0, 0, false);
		this.arena.giveBack(lent, 0, 0, false);
	}

	/**
	 * A sleep with nothing lent, which puts no granule asleep, lasts until a wake all the same: a request that would
	 * map meanwhile wakes the arena first.
	 */
	@Test
	void aSleepWithNothingLentLastsUntilTheWakeARequestThatWouldMapRuns() throws Exception {
		this.arena.giveBack(this.arena.allocate(0, MIB, 0), 0, 0, false);
		this.arena.sleep(false);
		assertThat(this.arena.asleep()).isTrue();
		assertThat(this.arena.sleepingBytes()).isZero();
		assertThat(this.driver.usedBytes(0)).isZero();

		Block block = CompletableFuture.supplyAsync(() -> this.arena.allocate(0, MIB, 0)).get(10, TimeUnit.SECONDS);
		assertThat(this.arena.asleep()).as("woken by the request").isFalse();
		assertThat(this.arena.segmentBytes()).isEqualTo(GRANULE).isEqualTo(this.driver.usedBytes(0));

		this.arena.giveBack(block, 0, 0, false);
		this.arena.sleep(false);
		this.arena.close();
		assertThat(this.arena.asleep()).as("closed").isFalse();
	}

	/**
	 * A sleep that reaches the arena after its close, as one that passed the pool's check can, fails and puts nothing
	 * asleep: the close dropped what slept, and nothing would drop it after.
	 */
	@Test
	void aSleepAfterTheCloseFailsAndTakesNothingOut() {
		Block lent = this.arena.allocate(0, MIB, 0);
		this.arena.close();

		assertThatIllegalStateException().isThrownBy(() -> this.arena.sleep(true))
			.withMessage("the arena was closed as its sleep began: nothing was put asleep");

		assertThat(this.arena.asleep()).isFalse();
		assertThat(this.arena.sleepingBytes()).isZero();
		assertThat(this.arena.offloadedBytes()).as("host memory held for a copy").isZero();
		this.arena.giveBack(lent, 0, 0, false);
		assertThat(this.driver.usedBytes(0)).isZero();
	}

	/**
	 * A sleep while another thread maps granules waits for the map to end, then puts them asleep with the rest: the
	 * device holds nothing of the arena once the sleep returns.
	 */
	@Test
	void aSleepWhileAnotherThreadMapsWaitsForTheMapAndPutsItsGranulesAsleep() throws Exception {
		Block first = this.arena.allocate(0, MIB, 0);
		this.hold.call.set("cuMemCreate");
		Future<Block> mapping = this.other.submit(() -> this.arena.allocate(0, 3 * MIB, 0));
		assertThat(this.hold.entered.await(10, TimeUnit.SECONDS)).as("the other thread maps").isTrue();

		FutureTask<long[]> sleep = waiting(() -> this.arena.sleep(false), Thread.State.BLOCKED);
		assertThat(sleep).as("waits for the map").isNotDone();

		this.hold.resume.countDown();
		Block mapped = mapping.get(10, TimeUnit.SECONDS);
		assertThat(sleep.get(10, TimeUnit.SECONDS)).as("both granules, their bytes dropped")
			.containsExactly(2 * GRANULE, 0);
		assertThat(this.driver.usedBytes(0)).isZero();
		assertThat(this.arena.sleepingBytes()).isEqualTo(2 * GRANULE);
		this.arena.wake();
		mapped.allocation.fill(0, mapped.size, (byte) 7);
		assertThat(this.arena.segmentBytes()).isEqualTo(2 * GRANULE).isEqualTo(this.driver.usedBytes(0));
		this.arena.giveBack(mapped, 0, 0, false);
		this.arena.giveBack(first, 0, 0, false);
	}

	/**
	 * A close while another thread maps granules waits for the map to end before it gives back what is free: the
	 * driver would refuse to free a range with a mapping under way.
	 */
	@Test
	void aCloseWhileAnotherThreadMapsWaitsForTheMapToEnd() throws Exception {
		this.hold.call.set("cuMemCreate");
		Future<Block> growing = this.other.submit(() -> this.arena.allocate(0, 3 * MIB, 0));
		assertThat(this.hold.entered.await(10, TimeUnit.SECONDS)).as("the other thread maps").isTrue();

		FutureTask<Block> close = waiting(() -> {
			this.arena.close();
			return null;
		});
		assertThat(close).as("waits for the map").isNotDone();

		this.hold.resume.countDown();
		Block grown = growing.get(10, TimeUnit.SECONDS);
		close.get(10, TimeUnit.SECONDS);
		assertThat(this.driver.usedBytes(0)).as("the lent block's granules").isEqualTo(2 * GRANULE);
		this.arena.giveBack(grown, 0, 0, false);
	}

	/**
	 * An unmap the driver refuses leaves its run mapped and counted, and the runs after it too: their spans lend
	 * again without a map, and a later trim gives them back.
	 */
	@Test
	void anUnmapTheDriverRefusesLeavesTheRunsMappedAndCounted() {
		this.arena.giveBack(this.arena.allocate(0, 3 * MIB, 0), 0, 0, false);
		this.refused.set("cuMemUnmap");

		assertThatExceptionOfType(CudaException.class)
			.isThrownBy(() -> this.arena.release(Long.MAX_VALUE, Long.MAX_VALUE));
		assertThat(this.arena.segmentBytes()).as("both granules")
			.isEqualTo(2 * GRANULE)
			.isEqualTo(this.driver.usedBytes(0));
		Block again = this.arena.take(0, 3 * MIB, 0);
		assertThat(again).as("the span, mapped").isNotNull();
		again.allocation.fill(0, again.size, (byte) 7);
		this.arena.giveBack(again, 0, 0, false);
		assertThat(this.arena.release(Long.MAX_VALUE, Long.MAX_VALUE)).isEqualTo(2 * GRANULE);
		assertThat(this.driver.usedBytes(0)).isZero();
	}

	/**
	 * A map the full device refuses partway, whose run mapped before it the driver then refuses to unmap again: the
	 * request fails with the driver's refusal, the out-of-memory suppressed in it, not with an out-of-memory a caller
	 * would try again after; the run left mapped stays counted, and a later trim gives it back.
	 */
	@Test
	void aMapRefusedPartwayWhoseUnmapIsRefusedFailsWithTheRefusalAndKeepsItsRunCounted() {
		List<Block> blocks = granuleBlocks(60 * MIB);
		this.refused.set("cuMemUnmap");

		assertThatExceptionOfType(CudaException.class).isThrownBy(() -> this.arena.allocate(0, 3 * GRANULE, 0))
			.satisfies((refusal) -> {
				assertThat(refusal.call()).isEqualTo("cuMemUnmap");
				assertThat(refusal.getSuppressed()).singleElement().isInstanceOf(GpuOutOfMemoryException.class);
			});
		assertThat(this.arena.segmentBytes()).as("the blocks' granules and the run whose unmap was refused")
			.isEqualTo(62 * MIB)
			.isEqualTo(this.driver.usedBytes(0));
		blocks.forEach((block) -> this.arena.giveBack(block, 0, 0, false));
		assertThat(this.arena.release(Long.MAX_VALUE, Long.MAX_VALUE)).isEqualTo(62 * MIB);
	}

	/**
	 * A device full but for the granules a trim is unmapping: a request the device refuses meanwhile waits for the
	 * unmap and tries again, rather than fail while the memory it needs is on its way back.
	 */
	@Test
	void aMapTheDeviceRefusesWhileGranulesAreUnmappedTriesAgainOnceTheyAre() throws Exception {
		List<Block> blocks = new ArrayList<>();
		Future<Long> trim = fillAndTrimTwoGranules(blocks);
		FutureTask<Block> request = refusedWhileTrimmed();

		this.hold.resume.countDown();
		assertThat(trim.get(10, TimeUnit.SECONDS)).isEqualTo(2 * GRANULE);
		blocks.add(request.get(10, TimeUnit.SECONDS));
		assertThat(this.arena.segmentBytes()).isEqualTo(64 * MIB).isEqualTo(this.driver.usedBytes(0));
		blocks.forEach((block) -> this.arena.giveBack(block, 0, 0, false));
	}

	/**
	 * A request the full device refuses with no unmap under way, nor ended since it began, fails after one try: there
	 * is nothing it could wait for, though unmaps ended before it.
	 */
	@Test
	void aMapTheFullDeviceRefusesWithNoUnmapUnderWayFailsAfterOneTry() {
		this.arena.giveBack(this.arena.allocate(0, GRANULE, 0), 0, 0, false);
		assertThat(this.arena.release(Long.MAX_VALUE, Long.MAX_VALUE)).as("an unmap ended before").isEqualTo(GRANULE);
		List<Block> blocks = granuleBlocks(64 * MIB);
		int creates = this.driver.calls("cuMemCreate");

		assertThatExceptionOfType(GpuOutOfMemoryException.class).isThrownBy(() -> this.arena.allocate(0, GRANULE, 0));
		assertThat(this.driver.calls("cuMemCreate") - creates).as("tries").isOne();
		blocks.forEach((block) -> this.arena.giveBack(block, 0, 0, false));
	}

	/**
	 * A request the full device refuses while a trim unmaps waits for that trim's granules only: an unmap begun
	 * meanwhile by another trim, still under way, does not keep it waiting.
	 */
	@Test
	void aMapTheDeviceRefusesWaitsOnlyForTheUnmapsUnderWayWhenRefused() throws Exception {
		List<Block> blocks = new ArrayList<>();
		Future<Long> trim = fillAndTrimTwoGranules(blocks);
		FutureTask<Block> request = refusedWhileTrimmed();

		this.arena.giveBack(blocks.remove(blocks.size() - 1), 0, 0, false);
		this.secondHold.call.set("cuMemUnmap");
		FutureTask<Block> laterTrim = waiting(() -> {
			this.arena.release(Long.MAX_VALUE, Long.MAX_VALUE);
			return null;
		});
		assertThat(this.secondHold.entered.await(10, TimeUnit.SECONDS)).as("a later trim unmaps").isTrue();

		this.hold.resume.countDown();
		assertThat(trim.get(10, TimeUnit.SECONDS)).isEqualTo(2 * GRANULE);
		blocks.add(request.get(10, TimeUnit.SECONDS));
		assertThat(laterTrim).as("still unmapping").isNotDone();
		this.secondHold.resume.countDown();
		laterTrim.get(10, TimeUnit.SECONDS);
		assertThat(this.arena.segmentBytes()).isEqualTo(62 * MIB).isEqualTo(this.driver.usedBytes(0));
		blocks.forEach((block) -> this.arena.giveBack(block, 0, 0, false));
	}

	/**
	 * Over steps of four granules: a step the device refuses (another process holds all but a granule) maps the
	 * request's own granule alone; once the device has room, the next request in the step maps the rest of it with
	 * one call, the granule already mapped left as it was; each run goes back whole, once all it holds is free.
	 */
	@Test
	void aStepRefusedMapsAGranuleAloneAndTheNextRequestMapsTheRestOfTheStep() {
		StatisticsAllocator counted = new StatisticsAllocator(this.physical);
		Arena stepped = new Arena(counted, GRANULE, 4 * GRANULE, this.counters, (classIndex) -> false);
		MemoryAllocator device = this.backend.allocator(MemoryKind.DEVICE);
		Allocation neighbour = device.allocate(64 * MIB - GRANULE);
		Block first = stepped.allocate(0, MIB, 0);
		assertThat(stepped.segmentBytes()).as("the request's granule alone").isEqualTo(GRANULE);
		device.free(neighbour);

		Block second = stepped.allocate(0, 2 * MIB, 0);
		second.allocation.fill(0, second.size, (byte) 7);
		assertThat(counted.statistics().totalCount()).as("one call for the rest of the step").isEqualTo(2);
		assertThat(stepped.segmentBytes()).isEqualTo(4 * GRANULE).isEqualTo(this.driver.usedBytes(0));

		stepped.giveBack(first, 0, 0, false);
		assertThat(stepped.release(Long.MAX_VALUE, Long.MAX_VALUE)).as("each run holds part of the second").isZero();
		stepped.giveBack(second, 0, 0, false);
		assertThat(stepped.release(Long.MAX_VALUE, Long.MAX_VALUE)).isEqualTo(4 * GRANULE);
		stepped.close();
		assertThat(this.driver.usedBytes(0)).isZero();
	}

	/**
	 * While a trim unmaps a range's last granules, another trim leaves the range reserved, and a close waits for the
	 * unmap; then everything is given back.
	 */
	@Test
	void aRangeWhoseGranulesAreBeingUnmappedGoesBackOnlyOnceTheyAre() throws Exception {
		this.arena.giveBack(this.arena.allocate(0, 3 * MIB, 0), 0, 0, false);
		long range = this.arena.addressBytes();
		this.hold.call.set("cuMemUnmap");
		Future<Long> trim = this.other.submit(() -> this.arena.release(Long.MAX_VALUE, Long.MAX_VALUE));
		assertThat(this.hold.entered.await(10, TimeUnit.SECONDS)).as("the trim unmaps").isTrue();

		assertThat(this.arena.release(Long.MAX_VALUE, Long.MAX_VALUE)).as("nothing left to unmap").isZero();
		assertThat(this.arena.addressBytes()).as("the range kept").isEqualTo(range);
		FutureTask<Block> close = waiting(() -> {
			this.arena.close();
			return null;
		});
		assertThat(close).as("waits for the unmap").isNotDone();

		this.hold.resume.countDown();
		assertThat(trim.get(10, TimeUnit.SECONDS)).isEqualTo(2 * GRANULE);
		close.get(10, TimeUnit.SECONDS);
		assertThat(this.arena.addressBytes()).isZero();
		assertThat(this.driver.usedBytes(0)).isZero();
	}

	/**
	 * Fills the device with blocks of a granule, into {@code blocks}, frees two apart and trims them on the other
	 * thread, whose first unmap is held: the trim.
	 */
	private Future<Long> fillAndTrimTwoGranules(List<Block> blocks) throws InterruptedException {
		blocks.addAll(granuleBlocks(64 * MIB));
		this.arena.giveBack(blocks.remove(2), 0, 0, false);
		this.arena.giveBack(blocks.remove(0), 0, 0, false);
		this.hold.call.set("cuMemUnmap");
		Future<Long> trim = this.other.submit(() -> this.arena.release(Long.MAX_VALUE, Long.MAX_VALUE));
		assertThat(this.hold.entered.await(10, TimeUnit.SECONDS)).as("the trim unmaps").isTrue();
		return trim;
	}

	/** Blocks of a granule each, lent until they hold {@code bytes}. */
	private List<Block> granuleBlocks(long bytes) {
		List<Block> blocks = new ArrayList<>();
		for (long held = 0; held < bytes; held += GRANULE) {
			blocks.add(this.arena.allocate(0, GRANULE, 0));
		}
		return blocks;
	}

	/** A request for two granules, which the full device refuses while the trim unmaps: it waits. */
	private FutureTask<Block> refusedWhileTrimmed() throws InterruptedException {
		FutureTask<Block> request = waiting(() -> this.arena.allocate(0, 2 * GRANULE, 0));
		assertThat(request).as("waits for the unmaps, refused by the full device").isNotDone();
		return request;
	}

	/**
	 * Runs {@code request} on a thread of its own, a daemon, as one left waiting must not keep the tests' JVM alive,
	 * once that waits on a monitor or has ended.
	 */
	private static <T> FutureTask<T> waiting(Callable<T> request) throws InterruptedException {
		return waiting(request, Thread.State.WAITING);
	}

	/** As {@link #waiting(Callable)}, once the thread is in {@code state}: waiting, or blocked entering a monitor. */
	private static <T> FutureTask<T> waiting(Callable<T> request, Thread.State state) throws InterruptedException {
		FutureTask<T> task = new FutureTask<>(request);
		Thread thread = new Thread(task, "request");
		thread.setDaemon(true);
		thread.start();
		await().atMost(Duration.ofMinutes(1)).until(() -> task.isDone() || thread.getState() == state);
		return task;
	}

	/** A driver call held once armed, on the thread that makes it, until resumed. */
	private static final class Hold {

		/** The call to hold: {@code cuMemCreate} or {@code cuMemUnmap}; null once held. */
		final AtomicReference<String> call = new AtomicReference<>();

		/** Counted down as the held call begins. */
		final CountDownLatch entered = new CountDownLatch(1);

		/** Lets the held call go on. */
		final CountDownLatch resume = new CountDownLatch(1);

		/** Holds {@code call} where it is the one armed; answers whether it did. */
		boolean pause(String call) {
			if (!this.call.compareAndSet(call, null)) {
				return false;
			}
			this.entered.countDown();
			try {
				this.resume.await();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			return true;
		}

	}

}
