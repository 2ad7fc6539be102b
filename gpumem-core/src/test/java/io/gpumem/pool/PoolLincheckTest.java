package io.gpumem.pool;


import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
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
 * deadlock, livelock or exception fails the test.
 */
@Tag(AdmissionLincheckTest.MODEL_CHECKER)
class PoolLincheckTest {

	@ParameterizedTest
	@EnumSource(PoolSetup.class)
	void modelChecking(PoolSetup each) {
		Lending.setup = each;
		new ModelCheckingOptions().iterations(4)
			.invocationsPerIteration(40)
			.threads(2)
			.actorsPerThread(3)
			.actorsBefore(1)
			.actorsAfter(1)
			.sequentialSpecification(Lending.Model.class)
			.addGuarantee(forClasses(Lending::emulatesTheDriver).allMethods().ignore())
			.check(Lending.class);
	}

	/** The pool Lincheck drives: a new one each invocation, on the setup of the check under way. */
	@Param(name = "slot", gen = IntGen.class, conf = "0:2")
	@Param(name = "size", gen = IntGen.class, conf = "0:2")
	public static class Lending {

		private static final long MIB = 1L << 20;

		/** A free list's class, a class cut from the arena's segments, and a block that spans granules. */
		private static final long[] SIZES = { 3 << 10, 300 << 10, 3 * MIB };

		/** The setup each instance opens, set before each check. */
		private static volatile PoolSetup setup;

		private final GpuBackend backend = setup.open(16 * MIB);

		private final HeldAllocator held = new HeldAllocator(setup.allocator(this.backend));

		/** A small pool: five classes, two stripes, so that each statistics read is a few steps to explore. */
		private final StratifiedMemoryPool pool = new StratifiedMemoryPool(this.held, PoolConfig.builder("device")
			.sizeClasses(1 << 10, 4 << 10, 64 << 10, 512 << 10, 4 * MIB)
			.stripes(2)
			.build());

		/** What each slot holds: a buffer lent, or nothing. */
		private final LincheckSlots slots = new LincheckSlots(3);

		@Operation
		public String acquire(@Param(name = "slot") int slot, @Param(name = "size") int size) {
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
			this.pool.trim(SIZES[keep] - SIZES[0]);
		}

		/** A sleep, offloading; over fixed segments, refused while a buffer is lent. */
		@Operation
		public void sleep() {
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
			this.pool.wake();
		}

		/** Whether a statistics read is consistent in itself and with what the allocator held while it ran. */
		@Operation
		public boolean consistent() {
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

		@Validate
		public void booksAreExact() {
			for (int slot = 0; slot < this.slots.count(); slot++) {
				close(slot);
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
