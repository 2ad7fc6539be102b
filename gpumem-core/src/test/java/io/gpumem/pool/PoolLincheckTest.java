package io.gpumem.pool;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;

import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.gpumem.admission.AdmissionLincheckTest;
import io.gpumem.backend.GpuBackend;

import static org.jetbrains.lincheck.datastructures.ManagedStrategyGuaranteeKt.forClasses;

/**
 * A small pool's lending, closing, trimming, sleeping, waking and statistics under every interleaving Lincheck's model
 * checker explores, on the host backend and the fake driver, each arena, against a sequential model ({@link Model}):
 * every acquire of a free slot is served, every buffer closed reads the byte written to it, whatever sleep or wake
 * ran meanwhile, every statistics read is consistent ({@code inUseBytes + cachedBytes == reservedBytes}, and
 * reserved never above what the allocator held during the read), and the books are exact once all is closed. Any
 * deadlock, livelock or exception fails the test. Over expandable segments the same runs again on a range made
 * fragmented before the actors: two live blocks with unmapped steps between them, so that acquires cut from the
 * free spans beside a live block or map steps among them, and trims unmap what the actors mapped there.
 */
@Tag(AdmissionLincheckTest.MODEL_CHECKER)
class PoolLincheckTest {

	@ParameterizedTest
	@EnumSource(PoolSetup.class)
	void modelChecking(PoolSetup each) {
		check(each, false);
	}

	@ParameterizedTest
	@EnumSource(names = { "HOST_EXPANDABLE", "CUDA_EXPANDABLE" })
	void modelCheckingOverFragmentedSegments(PoolSetup each) {
		check(each, true);
	}

	/**
	 * An acquire that begins as a sleep does, beside a block lent in a granule the sleep puts asleep, with nothing after
	 * them to wake the pool: under every interleaving the acquire ends, waking the pool where it passed before the
	 * sleep began and would map after it.
	 */
	@Test
	void anAcquireBegunAsASleepBeginsEnds() throws NoSuchMethodException {
		Method acquire = Lending.class.getMethod("acquire", int.class, int.class);
		ExecutionScenario scenario = new ExecutionScenario(List.of(actor(acquire, 0, 1)),
				List.of(List.of(actor(acquire, 1, 1)), List.of(actor(Lending.class.getMethod("sleep")))), List.of(),
				actor(Lending.class.getMethod("booksAreExact")));
		check(PoolSetup.HOST_EXPANDABLE, false,
				new ModelCheckingOptions().iterations(0).invocationsPerIteration(200).addCustomScenario(scenario));
	}

	private static void check(PoolSetup each, boolean fragmented) {
		check(each, fragmented, new ModelCheckingOptions().iterations(4)
			.invocationsPerIteration(40)
			.threads(2)
			.actorsPerThread(3)
			.actorsBefore(1)
			.actorsAfter(1));
	}

	/** Checks {@link Lending} on {@code each}, made {@code fragmented} or not, with {@code options}. */
	private static void check(PoolSetup each, boolean fragmented, ModelCheckingOptions options) {
		Lending.setup = each;
		Lending.fragmented = fragmented;
		options.sequentialSpecification(Lending.Model.class)
			.addGuarantee(forClasses(Lending::emulatesTheDriver).allMethods().ignore())
			.check(Lending.class);
	}

	/** A call of {@code method} with {@code arguments}, for a scenario of one's own. */
	private static Actor actor(Method method, Object... arguments) {
		return new Actor(method, List.of(arguments), false, false, false, false, false);
	}

	/** The pool Lincheck drives: a new one each invocation, on the setup of the check under way. */
	@Param(name = "slot", gen = IntGen.class, conf = "0:2")
	@Param(name = "size", gen = IntGen.class, conf = "0:2")
	public static class Lending {

		private static final long MIB = 1L << 20;

		/** A free list's class, a class cut from the arena's segments, and a block that spans granules. */
		private static final long[] SIZES = { 3 << 10, 300 << 10, 3 * MIB };

		/**
		 * What a fragmented pool lends before the actors, in address order: a 2 MiB block, then 300 KiB alone in the
		 * second granule of the first step, the rest of that step, a whole step, and 3.5 MiB from the third step's
		 * boundary; the {@link #KEPT} stay lent to the end, the others are closed and trimmed. The trim leaves the
		 * second step unmapped between the two kept blocks and the first step's run mapped, shared by a live block and
		 * a free granule: the actors' 300 KiB cut from the free spans, their 3 MiB map steps in the hole or past the
		 * end.
		 */
		private static final long[] STREWN = { 2 * MIB, 300 << 10, 2 * MIB - (300 << 10), 4 * MIB, 7 * MIB / 2 };

		/** The step the blocks of {@link #STREWN} are mapped in: the default. */
		private static final long STEP = PoolConfig.DEFAULT_MAPPING_STEP_BYTES;

		/** Which of {@link #STREWN} stay lent. */
		private static final List<Integer> KEPT = List.of(1, 4);

		/** The setup each instance opens, set before each check. */
		private static volatile PoolSetup setup;

		/** Whether each instance's pool is made fragmented before the actors, set before each check. */
		private static volatile boolean fragmented;

		private final GpuBackend backend = setup.open(fragmented ? 32 * MIB : 16 * MIB);

		private final HeldAllocator held = new HeldAllocator(setup.allocator(this.backend));

		/** A small pool: five classes, two stripes, so that each statistics read is a few steps to explore. */
		private final StratifiedMemoryPool pool = new StratifiedMemoryPool(this.held, PoolConfig.builder("device")
			.sizeClasses(1 << 10, 4 << 10, 64 << 10, 512 << 10, 4 * MIB)
			.stripes(2)
			.build());

		/** What each slot holds: a buffer lent, or nothing. */
		private final LincheckSlots slots = new LincheckSlots(3);

		/** Whether this pool is made fragmented at its first operation. */
		private final boolean strews = fragmented;

		/** The blocks a fragmented pool keeps lent throughout, once strewn. */
		private volatile List<PooledBuffer> strewn = List.of();

		/**
		 * Strews a fragmented pool at its first operation, the init part's: strewn by the constructor, the driver's
		 * objects would be hashed there by identity hash codes other than those the model checker fixes for them in
		 * the runs (Lincheck substitutes them), and its sets would lose them.
		 */
		private void strewFirst() {
			if (this.strews && this.strewn.isEmpty()) {
				synchronized (this) {
					if (this.strewn.isEmpty()) {
						this.strewn = strew();
					}
				}
			}
		}

		/**
		 * Lends {@link #STREWN}, marks the {@link #KEPT} with their place, closes the others and trims: of the three
		 * steps mapped, the two the kept blocks lie in stay, apart.
		 * @return the blocks kept lent
		 */
		private List<PooledBuffer> strew() {
			List<PooledBuffer> kept = new ArrayList<>();
			List<PooledBuffer> closed = new ArrayList<>();
			for (int i = 0; i < STREWN.length; i++) {
				PooledBuffer buffer = this.pool.acquire(STREWN[i]);
				buffer.copyFrom(0, new byte[] { (byte) kept.size() }, 0, 1);
				(KEPT.contains(i) ? kept : closed).add(buffer);
			}
			closed.forEach(PooledBuffer::close);
			long mapped = this.held.held();
			this.pool.trim(0);
			if (mapped != 3 * STEP || this.held.held() != 2 * STEP) {
				throw new IllegalStateException("the range was not left fragmented: " + this.held.held() + " of "
						+ mapped + " bytes still mapped after the trim, where the two kept blocks' steps were to stay, "
						+ this.pool.statistics());
			}
			return kept;
		}

		@Operation
		public String acquire(@Param(name = "slot") int slot, @Param(name = "size") int size) {
			strewFirst();
			if (!this.slots.fill(slot)) {
				return "occupied";
			}
			PooledBuffer buffer = this.pool.acquire(SIZES[size]);
			buffer.copyFrom(0, new byte[] { (byte) slot }, 0, 1);
			this.slots.set(slot, buffer);
			return "lent";
		}

		@Operation
		public String close(@Param(name = "slot") int slot) {
			strewFirst();
			Object held = this.slots.take(slot);
			if (held == null) {
				return "empty";
			}
			PooledBuffer buffer = (PooledBuffer) held;
			byte[] first = new byte[1];
			buffer.copyTo(0, first, 0, 1);
			buffer.close();
			this.slots.set(slot, null);
			return (first[0] == slot) ? "closed" : "overwritten";
		}

		@Operation
		public void trim(@Param(name = "size") int keep) {
			strewFirst();
			this.pool.trim(SIZES[keep] - SIZES[0]);
		}

		/** A sleep, offloading; over fixed segments, refused while a buffer is lent. */
		@Operation
		public void sleep() {
			strewFirst();
			try {
				this.pool.sleep(SleepMode.OFFLOAD);
			}
			catch (IllegalStateException ex) {
				if (setup.expandable() || !ex.getMessage().startsWith("pool 'device' cannot sleep: it lends")) {
					throw ex;
				}
			}
		}

		@Operation
		public void wake() {
			strewFirst();
			this.pool.wake();
		}

		/** Whether a statistics read is consistent in itself and with what the allocator held while it ran. */
		@Operation
		public boolean consistent() {
			strewFirst();
			this.held.mark();
			PoolStatistics statistics = this.pool.statistics();
			return statistics.inUseBytes() + statistics.cachedBytes() == statistics.reservedBytes()
					&& statistics.inUseBytes() >= 0 && statistics.reservedBytes() <= this.held.mostSinceMark();
		}

		/**
		 * Whether a class is the driver's emulation of virtual memory, whose file mappings the model checker cannot
		 * run: it runs them as one step each, as the driver is to the pool.
		 */
		static Boolean emulatesTheDriver(String className) {
			return className.startsWith("io.gpumem.host.HostVirtualMemory")
					|| className.startsWith("io.gpumem.cuda.FakeAddressRange");
		}

		/**
		 * Whether the books are exact once every buffer is closed, and, before, whether a pool over expandable segments
		 * that reads asleep holds no memory: a sleep unmaps all of it, and nothing maps until the wake.
		 */
		@Validate
		public void booksAreExact() {
			strewFirst();
			if (setup.expandable() && this.pool.sleepStatus().state() == SleepStatus.State.ASLEEP
					&& this.held.held() != 0) {
				throw new IllegalStateException("the pool reads asleep over " + this.held.held() + " bytes mapped");
			}
			for (int slot = 0; slot < this.slots.count(); slot++) {
				close(slot);
			}
			for (int i = 0; i < this.strewn.size(); i++) {
				byte[] first = new byte[1];
				this.strewn.get(i).copyTo(0, first, 0, 1);
				if (first[0] != i) {
					throw new IllegalStateException("a block lent throughout lost its bytes: read " + first[0]
							+ " where " + i + " was written");
				}
				this.strewn.get(i).close();
			}
			PoolStatistics statistics = this.pool.statistics();
			long heldBeforeClose = this.held.held();
			this.pool.close();
			this.backend.close();
			if (statistics.inUseBytes() != 0 || statistics.reservedBytes() != heldBeforeClose || this.held.held() != 0) {
				throw new IllegalStateException("books not exact once all closed: in use " + statistics.inUseBytes()
						+ ", reserved " + statistics.reservedBytes() + " of " + heldBeforeClose + " held, "
						+ this.held.held() + " held after close");
			}
		}

		/** The pool's slots as one thread sees them: a free slot is always served, a read always consistent. */
		public static final class Model {

			private final boolean[] lent = new boolean[3];

			public String acquire(int slot, int size) {
				if (this.lent[slot]) {
					return "occupied";
				}
				this.lent[slot] = true;
				return "lent";
			}

			public String close(int slot) {
				boolean was = this.lent[slot];
				this.lent[slot] = false;
				return was ? "closed" : "empty";
			}

			public void trim(int keep) {
			}

			public void sleep() {
			}

			public void wake() {
			}

			public boolean consistent() {
				return true;
			}

		}

	}

}
