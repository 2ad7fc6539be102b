package io.gpumem.benchmarks;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import picocli.CommandLine;

import io.gpumem.benchmarks.ServiceWorkload.Hold;
import io.gpumem.benchmarks.ServiceWorkload.Options;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class ServiceWorkloadOptionsTest {

	@Test
	void aRunHoldsParkedAndStartsWarmUnlessToldOtherwise() {
		Options defaults = Options.parse();
		assertThat(defaults.hold()).isEqualTo(Hold.PARK);
		assertThat(defaults.warm()).isTrue();
		assertThat(defaults.threads()).isEqualTo(ServiceWorkload.Threads.PLATFORM);
		Options spinningCold = Options.parse("--hold", "spin", "--start", "cold", "--hold-us", "5");
		assertThat(spinningCold.hold()).isEqualTo(Hold.SPIN);
		assertThat(spinningCold.warm()).isFalse();
		assertThat(spinningCold.holdMicros()).isEqualTo(5);
	}

	@Test
	void anUnknownHoldOrStartIsRefusedWithTheValueAndTheChoices() {
		assertThatExceptionOfType(CommandLine.ParameterException.class)
			.isThrownBy(() -> Options.parse("--hold", "sleep"))
			.withMessage("Invalid value for option '--hold': expected one of [PARK, SPIN] (case-insensitive) but was "
					+ "'sleep'");
		assertThatExceptionOfType(CommandLine.ParameterException.class)
			.isThrownBy(() -> Options.parse("--start", "hot"))
			.withMessageContaining("'--start'")
			.withMessageContaining("'hot'");
		assertThatExceptionOfType(CommandLine.ParameterException.class)
			.isThrownBy(() -> Options.parse("--requests", "many"))
			.withMessage("Invalid value for option '--requests': 'many' is not an int");
		assertThatExceptionOfType(CommandLine.ParameterException.class)
			.isThrownBy(() -> Options.parse("--child", "true"))
			.withMessageContaining("Unknown options: '--child', 'true'");
	}

	@Test
	void aForkedRunIsGivenTheSameOptionsForOneLender() {
		Options options = Options.parse("--workers", "16,64", "--hold", "spin", "--start", "cold", "--shape", "sample",
				"--lenders", "gpumem,netty", "--json", "out.json", "--threads", "virtual");
		Options forked = Options.parse(options.forLender("netty", new int[] { 64 }, 1).toArray(String[]::new));
		assertThat(forked.lenders()).containsExactly("netty");
		assertThat(forked.workers()).containsExactly(64);
		assertThat(forked.repeat()).isEqualTo(1);
		assertThat(forked.json()).isNull();
		assertThat(forked).usingRecursiveComparison()
			.ignoringFields("lenders", "workers", "repeat", "json")
			.isEqualTo(options);
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
