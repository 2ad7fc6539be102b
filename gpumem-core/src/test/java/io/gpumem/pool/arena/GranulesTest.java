package io.gpumem.pool.arena;

import java.util.Arrays;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.gpumem.host.HostBackend;
import io.gpumem.memory.MemoryAllocator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The granules of one range of expandable segments, on the host backend: what a span claims to map (its own granules
 * and the rest of their steps, no other), the runs they are mapped in (a step at most, never across a step's
 * boundary), and which runs a trim may take out (only those lying wholly in a free span).
 */
class GranulesTest {

	private static final long MIB = 1L << 20;

	private static final long GRANULE = 2 * MIB;

	private final HostBackend backend = new HostBackend(64 * MIB);

	private final MemoryAllocator physical = this.backend.virtualMemory().allocator();

	/** A range of 16 granules, mapped in steps of two. */
	private final Granules granules = new Granules(this.physical.addressSpace().reserve(32 * MIB), GRANULE, 2 * GRANULE);

	@AfterEach
	void unmapAll() {
		Unmapping unmapping = new Unmapping();
		this.granules.takeFree(0, 32 * MIB, Long.MAX_VALUE, Long.MAX_VALUE, unmapping);
		unmapping.run(this.physical);
		unmapping.settle();
		assertThat(this.granules.mappedBytes()).isZero();
		this.granules.range.release();
		assertThat(this.physical.memoryInfo().freeBytes()).isEqualTo(64 * MIB);
		this.backend.close();
	}

	@Test
	void aSpanClaimsTheRestOfItsStepAndMapsItAsOneRun() {
		Granules.Claim claim = mapAhead(9 * MIB, 10 * MIB);

		assertThat(claim.granules).containsExactly(4, 5);
		assertThat(claim.ahead()).isTrue();
		assertThat(claim.physical[0]).isSameAs(claim.physical[1]);
		assertThat(claim.physical[0].size()).isEqualTo(2 * GRANULE);
		assertThat(this.granules.runs()).containsExactly(8 * MIB, 12 * MIB);
	}

	@Test
	void aSpanAcrossStepsMapsEachStepAsARunOfItsOwn() {
		Granules.Claim claim = mapAhead(3 * MIB, 9 * MIB);

		assertThat(claim.granules).containsExactly(0, 1, 2, 3, 4, 5);
		assertThat(Arrays.stream(claim.physical).distinct()).hasSize(3);
		assertThat(claim.physical[1]).isNotSameAs(claim.physical[2]);
		assertThat(claim.physical[3]).isNotSameAs(claim.physical[4]);
		assertThat(this.granules.mappedBytes()).isEqualTo(12 * MIB);
	}

	@Test
	void aSpanOverWholeStepsClaimsNothingAhead() {
		Granules.Claim claim = mapAhead(8 * MIB, 12 * MIB);

		assertThat(claim.granules).containsExactly(4, 5);
		assertThat(claim.ahead()).isFalse();
	}

	@Test
	void theGranulesClaimedAheadCountFreeFromTheClaimOnly() {
		map(9 * MIB, 10 * MIB, 7, true);
		this.granules.freed(9 * MIB, 10 * MIB, 3);

		Unmapping unmapping = new Unmapping();
		assertThat(this.granules.takeFree(8 * MIB, 12 * MIB, Long.MAX_VALUE, 5, unmapping))
			.as("the granule ahead, free since 7, not idle since 5").isZero();
		assertThat(this.granules.takeFree(8 * MIB, 12 * MIB, Long.MAX_VALUE, 7, unmapping)).isEqualTo(4 * MIB);
		unmapping.run(this.physical);
		unmapping.settle();
	}

	@Test
	void aClaimTakesNoGranuleAnotherIsUnmapping() {
		map(9 * MIB, 10 * MIB, 0, false);
		this.granules.freed(8 * MIB, 10 * MIB, 1);
		Unmapping unmapping = new Unmapping();
		assertThat(this.granules.takeFree(8 * MIB, 10 * MIB, Long.MAX_VALUE, Long.MAX_VALUE, unmapping))
			.isEqualTo(GRANULE);

		Granules.Claim beside = this.granules.claim(10 * MIB, 11 * MIB, 0);
		assertThat(beside.granules).as("granule 4 is being unmapped").containsExactly(5);
		this.granules.map(beside, true, this.physical);
		this.granules.settle(beside);
		unmapping.run(this.physical);
		unmapping.settle();
		assertThat(this.granules.runs()).containsExactly(10 * MIB, 12 * MIB);
	}

	@Test
	void aSpanClaimsNoGranuleOfAnotherStepNorOneMapped() {
		mapAhead(9 * MIB, 10 * MIB);

		assertThat(mapAhead(13 * MIB, 14 * MIB).granules).as("the step after, the steps before left unmapped")
			.containsExactly(6, 7);
		assertThat(this.granules.claim(11 * MIB, 15 * MIB, 0).isEmpty()).as("a span in mapped granules").isTrue();
		assertThat(this.granules.runs()).containsExactly(8 * MIB, 16 * MIB);
	}

	@Test
	void withoutTheStepOnlyTheGranulesASpanTouchesAreMapped() {
		Granules.Claim claim = this.granules.claim(5 * MIB, 6 * MIB, 0);
		assertThat(claim.granules).containsExactly(2, 3);
		assertThat(claim.touches(2)).isTrue();
		assertThat(claim.touches(3)).isFalse();

		this.granules.map(claim, false, this.physical);
		assertThat(claim.physical[0].size()).isEqualTo(GRANULE);
		assertThat(claim.physical[1]).isNull();
		assertThat(this.granules.settle(claim)).isEqualTo(GRANULE);
		assertThat(this.granules.runs()).containsExactly(4 * MIB, 6 * MIB);
	}

	@Test
	void aTrimTakesOutOnlyRunsLyingWhollyInTheFreeSpan() {
		mapAhead(0, 8 * MIB);
		this.granules.freed(0, 8 * MIB, 1);

		Unmapping unmapping = new Unmapping();
		long taken = this.granules.takeFree(0, 3 * MIB, Long.MAX_VALUE, Long.MAX_VALUE, unmapping);
		assertThat(taken).as("a run with a live granule, at [3 MiB, 4 MiB)").isZero();
		taken = this.granules.takeFree(3 * MIB, 8 * MIB, Long.MAX_VALUE, Long.MAX_VALUE, unmapping);
		assertThat(taken).as("the step from 4 MiB only").isEqualTo(4 * MIB);
		taken = this.granules.takeFree(0, 8 * MIB, Long.MAX_VALUE, 0, unmapping);
		assertThat(taken).as("freed since the cutoff").isZero();

		unmapping.run(this.physical);
		unmapping.settle();
		assertThat(this.granules.runs()).containsExactly(0L, 4 * MIB);
		assertThat(this.granules.mappedBytes()).isEqualTo(4 * MIB);
	}

	/** A trim takes out free runs in address order until they cover its bytes, and no run more. */
	@Test
	void aTrimTakesOutRunsInOrderUntilTheyCoverItsBytes() {
		mapAhead(0, 12 * MIB);
		this.granules.freed(0, 12 * MIB, 1);

		Unmapping unmapping = new Unmapping();
		assertThat(this.granules.takeFree(0, 12 * MIB, 4 * MIB, Long.MAX_VALUE, unmapping)).as("a step's bytes")
			.isEqualTo(4 * MIB);
		assertThat(this.granules.runs()).as("the first step taken out").containsExactly(4 * MIB, 12 * MIB);
		assertThat(this.granules.takeFree(0, 12 * MIB, 5 * MIB, Long.MAX_VALUE, unmapping)).as("more than a step's")
			.isEqualTo(8 * MIB);
		unmapping.run(this.physical);
		unmapping.settle();
		assertThat(this.granules.mappedBytes()).isZero();
	}

	/** A span is busy where the last granule it touches is being unmapped, and not where none is. */
	@Test
	void aSpanWhoseLastGranuleIsBeingUnmappedIsBusy() {
		mapAhead(0, 8 * MIB);
		this.granules.freed(4 * MIB, 8 * MIB, 1);
		Unmapping unmapping = new Unmapping();
		assertThat(this.granules.takeFree(4 * MIB, 8 * MIB, Long.MAX_VALUE, Long.MAX_VALUE, unmapping))
			.isEqualTo(4 * MIB);

		assertThat(this.granules.busy(0, 4 * MIB)).as("the step before").isFalse();
		assertThat(this.granules.busy(MIB, 4 * MIB + 1)).as("a byte into the step unmapped").isTrue();
		unmapping.run(this.physical);
		unmapping.settle();
		assertThat(this.granules.busy(MIB, 4 * MIB + 1)).as("once unmapped").isFalse();
	}

	/** The range's last granule mapped ends a run of its own at the range's end. */
	@Test
	void theRangesLastGranuleEndsItsRun() {
		mapAhead(31 * MIB, 32 * MIB);

		assertThat(this.granules.runs()).containsExactly(28 * MIB, 32 * MIB);
	}

	/** Claims what {@code [from, to)} touches with the rest of its steps, maps it all and settles it. */
	private Granules.Claim mapAhead(long from, long to) {
		return map(from, to, 0, true);
	}

	/**
	 * Claims what {@code [from, to)} touches with the rest of its steps at {@code stamp}, maps it, or only what it
	 * touches where not {@code ahead}, and settles it.
	 */
	private Granules.Claim map(long from, long to, long stamp, boolean ahead) {
		Granules.Claim claim = this.granules.claim(from, to, stamp);
		this.granules.map(claim, ahead, this.physical);
		this.granules.settle(claim);
		return claim;
	}

}
