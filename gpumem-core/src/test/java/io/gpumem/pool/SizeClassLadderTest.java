package io.gpumem.pool;

import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class SizeClassLadderTest {

	@Test
	void everyRequestGoesToTheSmallestClassHoldingIt() {
		for (SizeClassLadder ladder : new SizeClassLadder[] { SizeClassLadder.defaultLadder(),
				SizeClassLadder.of(256, 1024, 4096, 16384, 65536, 262144), SizeClassLadder.of(3, 5, 1000, 1001) }) {
			long[] sizes = ladder.sizes();
			SplittableRandom random = new SplittableRandom(7);
			for (int i = 0; i < 200_000; i++) {
				long request = (i < 5000) ? i + 1 : 1 + random.nextLong(ladder.largest() + 100);
				int expected = -1;
				for (int c = 0; c < sizes.length; c++) {
					if (sizes[c] >= request) {
						expected = c;
						break;
					}
				}
				assertThat(ladder.indexOf(request)).as("class of %d in %s", request, ladder).isEqualTo(expected);
			}
			for (int c = 0; c < sizes.length; c++) {
				assertThat(ladder.indexOf(sizes[c])).as("class of its own size %d", sizes[c]).isEqualTo(c);
				assertThat(ladder.indexOf(sizes[c] + 1)).as("class of %d", sizes[c] + 1)
					.isEqualTo((c + 1 < sizes.length) ? c + 1 : -1);
			}
		}
	}

	@Test
	void defaultLadderHasFourAlignedClassesPerPowerOfTwo() {
		SizeClassLadder ladder = SizeClassLadder.defaultLadder();
		assertThat(ladder.size(0)).isEqualTo(256);
		assertThat(ladder.largest()).isEqualTo(64L << 20);
		assertThat(java.util.Arrays.stream(ladder.sizes())).allMatch(size -> size % 128 == 0);
		assertThat(ladder.sizes()).containsSubsequence(4096, 5120, 6144, 7168, 8192);
		for (int c = 1; c < ladder.count(); c++) {
			assertThat((double) ladder.size(c) / ladder.size(c - 1)).isLessThanOrEqualTo(1.5);
		}
		assertThat(ladder.count()).isEqualTo(71);
	}

	@Test
	void defaultLadderWastesUnderFifteenPercentWhereTheSeedsBucketsWasteHalf() {
		long[] requests = logUniformRequests(1_000_000, 256, 1 << 20, 2026);
		double defaultRatio = SizeClassLadder.defaultLadder().reservedOverRequested(requests);
		double seedRatio = SizeClassLadder.of(256, 1024, 4096, 16384, 65536, 262144, 1 << 20)
			.reservedOverRequested(requests);
		double powersOfTwo = SizeClassLadder.geometric(256, 1 << 20, 1, 1).reservedOverRequested(requests);
		System.out.printf("reserved/requested, log-uniform 256 B - 1 MiB: default %.3f, powers of two %.3f, "
				+ "seed 4x buckets %.3f%n", defaultRatio, powersOfTwo, seedRatio);
		assertThat(defaultRatio).isBetween(1.0, 1.15);
		assertThat(powersOfTwo).isBetween(1.35, 1.55);
		assertThat(seedRatio).isGreaterThan(1.7);
	}

	@Test
	void exactIndexAndValidation() {
		SizeClassLadder ladder = SizeClassLadder.of(256, 1024);
		assertThat(ladder.exactIndexOf(1024)).isEqualTo(1);
		assertThat(ladder.exactIndexOf(1000)).isEqualTo(-1);
		assertThat(ladder.indexOf(1025)).isEqualTo(-1);
		assertThat(ladder).hasToString("[256 B, 1.00 KiB]");
		assertThatIllegalArgumentException().isThrownBy(() -> SizeClassLadder.of(1024, 256))
			.withMessage("size-classes must be strictly ascending (1024 is followed by 256), not [1024, 256]");
		assertThatIllegalArgumentException().isThrownBy(() -> SizeClassLadder.of(0, 256))
			.withMessageContaining("must all be positive (class 0 is 0)");
		assertThatIllegalArgumentException().isThrownBy(SizeClassLadder::of).withMessageContaining("at least one");
		assertThatIllegalArgumentException().isThrownBy(() -> SizeClassLadder.geometric(512, 256, 4, 128));
	}

	static long[] logUniformRequests(int count, long smallest, long largest, long seed) {
		SplittableRandom random = new SplittableRandom(seed);
		double low = Math.log(smallest);
		double high = Math.log(largest);
		long[] requests = new long[count];
		for (int i = 0; i < count; i++) {
			requests[i] = Math.round(Math.exp(low + random.nextDouble() * (high - low)));
		}
		return requests;
	}

}
