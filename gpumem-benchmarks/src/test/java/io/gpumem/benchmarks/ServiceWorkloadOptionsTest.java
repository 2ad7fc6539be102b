package io.gpumem.benchmarks;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.gpumem.benchmarks.ServiceWorkload.Hold;
import io.gpumem.benchmarks.ServiceWorkload.Options;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class ServiceWorkloadOptionsTest {

	@Test
	void aRunHoldsParkedAndStartsWarmUnlessToldOtherwise() {
		Options defaults = Options.parse(new String[0]);
		assertThat(defaults.hold()).isEqualTo(Hold.PARK);
		assertThat(defaults.warm()).isTrue();
		Options spinningCold = Options.parse(new String[] { "--hold", "spin", "--start", "cold", "--hold-us", "5" });
		assertThat(spinningCold.hold()).isEqualTo(Hold.SPIN);
		assertThat(spinningCold.warm()).isFalse();
		assertThat(spinningCold.holdMicros()).isEqualTo(5);
	}

	@Test
	void anUnknownHoldOrStartIsRefusedWithTheValueAndTheChoices() {
		assertThatIllegalArgumentException().isThrownBy(() -> Options.parse(new String[] { "--hold", "sleep" }))
			.withMessage("--hold sleep: a hold is park or spin");
		assertThatIllegalArgumentException().isThrownBy(() -> Options.parse(new String[] { "--start", "hot" }))
			.withMessage("--start hot: a run starts warm or cold");
	}

	@ParameterizedTest
	@EnumSource(Hold.class)
	void aHoldLastsAtLeastItsTime(Hold hold) {
		for (long nanos : new long[] { 1, 50_000, 2_000_000 }) {
			long start = System.nanoTime();
			hold.hold(nanos);
			assertThat(System.nanoTime() - start).as("%s for %d ns", hold, nanos).isGreaterThanOrEqualTo(nanos);
		}
	}

}
