package io.gpumem.admission;

import java.time.Duration;

import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryKind;
import io.gpumem.pool.LincheckSlots;
import io.gpumem.pool.PoolConfig;
import io.gpumem.pool.PooledBuffer;
import io.gpumem.pool.StratifiedMemoryPool;

/**
 * The admission's rules under every interleaving Lincheck's model checker explores, against a sequential model of its
 * books ({@link Model}): requests that may not wait are let in exactly while their bytes fit what the permits hold and
 * the pool lends outside them, a permit's buffer counts against it until closed, closes give everything back, and the
 * figures read are the model's. Any deadlock, livelock or exception fails the test.
 */
@Tag(AdmissionLincheckTest.MODEL_CHECKER)
public class AdmissionLincheckTest {

	/** The tag of the model checker's tests, which the build on other platforms leaves out (they explore no more there). */
	public static final String MODEL_CHECKER = "model-checker";

	@Test
	void modelChecking() {
		new ModelCheckingOptions().iterations(20)
			.invocationsPerIteration(40)
			.threads(2)
			.actorsPerThread(3)
			.actorsBefore(1)
			.actorsAfter(1)
			.sequentialSpecification(Admitting.Model.class)
			.check(Admitting.class);
	}

	/** The admission Lincheck drives: a new one, over a new pool, each invocation. */
	@Param(name = "slot", gen = IntGen.class, conf = "0:2")
	@Param(name = "mib", gen = IntGen.class, conf = "1:3")
	public static class Admitting {

		private static final long MIB = 1L << 20;

		/** The pool's reach: its device's capacity. */
		private static final long REACH = 6 * MIB;

		private final HostBackend backend = new HostBackend(REACH);

		private final StratifiedMemoryPool pool = new StratifiedMemoryPool(this.backend.allocator(MemoryKind.DEVICE),
				PoolConfig.builder("device").sizeClasses(1 << 10, 64 << 10, MIB, 4 * MIB).stripes(2).build());

		private final GpuAdmission admission = new GpuAdmission("device 0", 0, Duration.ZERO, this.pool);

		/** What each slot holds: a permit, a buffer lent outside admission, or nothing. */
		private final LincheckSlots slots = new LincheckSlots(3);

		@Operation
		public String enter(@Param(name = "slot") int slot, @Param(name = "mib") int mib) {
			if (!this.slots.fill(slot)) {
				return "occupied";
			}
			try {
				GpuAdmission.Permit permit = this.admission.enter(mib * MIB, Duration.ZERO);
				this.slots.set(slot, permit);
				return "admitted";
			}
			catch (GpuAdmissionException refused) {
				this.slots.set(slot, null);
				return "refused " + refused.refused();
			}
		}

		/** Fills a slot with a buffer lent outside admission: it counts against every request let in. */
		@Operation
		public String lendOutside(@Param(name = "slot") int slot) {
			if (!this.slots.fill(slot)) {
				return "occupied";
			}
			this.slots.set(slot, this.pool.acquire(MIB));
			return "lent";
		}

		/**
		 * Acquires and closes a buffer of 1 MiB on the slot's permit where it was admitted for 2 MiB or more, room for
		 * both threads at once; a permit closed meanwhile lends nothing.
		 */
		@Operation
		public String acquireOnPermit(@Param(name = "slot") int slot) {
			if (this.slots.settled(slot) instanceof GpuAdmission.Permit permit && permit.bytes() >= 2 * MIB) {
				try {
					permit.acquire(MIB).close();
					return "acquired";
				}
				catch (IllegalStateException closed) {
					return "none";
				}
			}
			return "none";
		}

		@Operation
		public String close(@Param(name = "slot") int slot) throws Exception {
			Object held = this.slots.take(slot);
			if (held == null) {
				return "empty";
			}
			((AutoCloseable) held).close();
			this.slots.set(slot, null);
			return "closed";
		}

		@Operation
		public long claimedBytes() {
			return this.admission.statistics().claimedBytes();
		}

		/** The books once every operation ran, then everything closed: nothing held, nothing lent, nothing left over. */
		@Validate
		public void booksAreExact() throws Exception {
			for (int slot = 0; slot < this.slots.count(); slot++) {
				close(slot);
			}
			AdmissionStatistics statistics = this.admission.statistics();
			this.pool.close();
			this.backend.close();
			if (statistics.claimedBytes() != 0 || statistics.lentBytes() != 0 || statistics.active() != 0
					|| statistics.waiting() != 0 || this.pool.statistics().inUseBytes() != 0) {
				throw new IllegalStateException("books not exact once all closed: " + statistics + ", pool in use "
						+ this.pool.statistics().inUseBytes());
			}
		}

		/** The admission's books as one thread sees them, one request at a time. */
		public static final class Model {

			private final long[] permits = new long[3];

			private final boolean[] outside = new boolean[3];

			private long claimed;

			private long lentOutside;

			public String enter(int slot, int mib) {
				if (this.permits[slot] != 0 || this.outside[slot]) {
					return "occupied";
				}
				long bytes = mib * MIB;
				if (this.claimed + this.lentOutside + bytes > REACH) {
					return "refused BYTES";
				}
				this.permits[slot] = bytes;
				this.claimed += bytes;
				return "admitted";
			}

			public String lendOutside(int slot) {
				if (this.permits[slot] != 0 || this.outside[slot]) {
					return "occupied";
				}
				this.outside[slot] = true;
				this.lentOutside += MIB;
				return "lent";
			}

			public String acquireOnPermit(int slot) {
				return (this.permits[slot] >= 2 * MIB) ? "acquired" : "none";
			}

			public String close(int slot) {
				if (this.permits[slot] != 0) {
					this.claimed -= this.permits[slot];
					this.permits[slot] = 0;
					return "closed";
				}
				if (this.outside[slot]) {
					this.outside[slot] = false;
					this.lentOutside -= MIB;
					return "closed";
				}
				return "empty";
			}

			public long claimedBytes() {
				return this.claimed;
			}

		}

	}

}
